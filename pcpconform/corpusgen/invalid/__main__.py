"""``python -m pcpconform.corpusgen.invalid OUTDIR``: build the invalid corpus."""

import sys

from pcpconform.corpusgen.invalid.build import main

sys.exit(main())
