from sidecar.cli.main import main

main()
