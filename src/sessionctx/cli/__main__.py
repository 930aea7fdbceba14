from sessionctx.cli import main

main()
