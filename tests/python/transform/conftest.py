import os
import sys

# the pass tests import the shared test kernels (tests/python/kernels.py)
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
