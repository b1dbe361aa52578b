from hsc.cli import main

raise SystemExit(main())
