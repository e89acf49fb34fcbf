"""`python -m tilelang ...`: the tilelang command line (see tilelang.cli)."""
import sys

from .cli import main

sys.exit(main())
