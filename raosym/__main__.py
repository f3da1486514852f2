"""``python -m raosym``: the same as the ``raosym`` command."""

import sys

from raosym.cli import main

sys.exit(main())
