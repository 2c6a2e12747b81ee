"""ctest's entry to tests/python: pytest on this folder, or exit 77 (ctest: Skipped) with the
reason when pytest is missing, so that a machine without it says so rather than passing. (CMake
registers this only when the module is built; a module that then fails to import fails the
tests.)"""
import os
import sys

try:
    import pytest
except ImportError:
    print("python tests skipped: pytest is not installed (Debian: python3-pytest)")
    sys.exit(77)

# Exit 5 (no test collected) is a failure here, as any non-zero code.
sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", os.path.dirname(os.path.abspath(__file__))]))
