from sidecar.cli.launch import main

if __name__ == "__main__":  # imported as __mp_main__ by a spawned child, it must not run
    main()
