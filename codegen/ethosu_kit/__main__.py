from ethosu_kit.cli.app import main

raise SystemExit(main())
