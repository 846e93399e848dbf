import sys

from fasteval.cli import main

sys.exit(main())
