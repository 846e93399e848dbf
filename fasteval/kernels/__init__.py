"""numba kernels by family: ranking measures, sorting/joining for prepare."""
