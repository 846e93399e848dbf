import sys

from fasteval.cli import console_main

sys.exit(console_main())
