"""``python -m pcpconform.check.corpus OUTDIR``: build the invalid corpus."""

import sys

from pcpconform.check.corpus.build import main

sys.exit(main())
