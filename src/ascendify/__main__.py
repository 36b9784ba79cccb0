from __future__ import annotations

from ascendify.cli import main

raise SystemExit(main())
