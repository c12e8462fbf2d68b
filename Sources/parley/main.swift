import ParleyCLI

// The CLI's logic is the ParleyCLI library (Sources/CLI); the executable only runs it.
Parley.main()
