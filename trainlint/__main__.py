from trainlint.cli import main

raise SystemExit(main())
