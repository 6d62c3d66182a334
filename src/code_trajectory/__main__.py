from code_trajectory.cli import main

raise SystemExit(main())
