from devplace.cli import main

raise SystemExit(main())
