from evalnb.cli import main

main()
