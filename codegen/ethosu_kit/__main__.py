from ethosu_kit.cli import main

raise SystemExit(main())
