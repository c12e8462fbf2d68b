// swift-tools-version:6.1
import PackageDescription

/// One set of compiler settings for every Parley module.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "Parley",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "parleyd", targets: ["parleyd"]),
        .executable(name: "parley", targets: ["parley"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.0.0"),
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
        // The caption page (`[web]`); no traits: swift-configuration is not needed.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
    ],
    targets: [
        // MARK: - C libraries, found with pkg-config
        .systemLibrary(
            name: "CPocketSphinx", path: "Sources/CShims/CPocketSphinx",
            pkgConfig: "pocketsphinx", providers: [.apt(["libpocketsphinx-dev"])]),
        .systemLibrary(
            name: "CEspeakNG", path: "Sources/CShims/CEspeakNG",
            pkgConfig: "espeak-ng", providers: [.apt(["libespeak-ng-dev"])]),
        .systemLibrary(
            name: "CALSA", path: "Sources/CShims/CALSA",
            pkgConfig: "alsa", providers: [.apt(["libasound2-dev"])]),
        .systemLibrary(
            name: "CSpeexDSP", path: "Sources/CShims/CSpeexDSP",
            pkgConfig: "speexdsp", providers: [.apt(["libspeexdsp-dev"])]),
        .systemLibrary(
            name: "CQREncode", path: "Sources/CShims/CQREncode",
            pkgConfig: "libqrencode", providers: [.apt(["libqrencode-dev"])]),

        // MARK: - Domains
        // The types the wire, the config, the history and the machine share (Speaker, mode, sample time, setting
        // bounds, a turn's word confidences and speaker detection).
        .target(name: "ParleyCore", path: "Sources/Core", swiftSettings: swiftSettings),
        // Optimized in debug builds too: the capture loop runs its sample arithmetic (the echo
        // delay and likeness searches), and the tests' live daemons are debug builds.
        .target(
            name: "ParleyAudio", dependencies: ["ParleyCore", "CALSA", "CSpeexDSP"], path: "Sources/Audio",
            swiftSettings: swiftSettings + [.unsafeFlags(["-O"], .when(configuration: .debug))]),
        .target(name: "ParleyEndpoint", dependencies: ["ParleyCore"], path: "Sources/Endpoint", swiftSettings: swiftSettings),
        .target(
            name: "ParleyRecognition",
            dependencies: ["ParleyCore", "CPocketSphinx", .product(name: "Logging", package: "swift-log")], path: "Sources/Recognition",
            swiftSettings: swiftSettings),
        .target(
            name: "ParleyTranslation",
            dependencies: [
                "ParleyCore",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Sources/Translation", swiftSettings: swiftSettings),
        .target(
            name: "ParleySynthesis", dependencies: ["ParleyCore", "CEspeakNG"], path: "Sources/Synthesis",
            swiftSettings: swiftSettings),
        .target(
            name: "ParleyHistory", dependencies: ["ParleyCore", .product(name: "GRDB", package: "GRDB.swift")],
            path: "Sources/History", swiftSettings: swiftSettings),
        .target(
            name: "ParleyConversation", dependencies: ["ParleyCore", "ParleyEndpoint", "ParleyRecognition"], path: "Sources/Conversation", swiftSettings: swiftSettings),
        .target(
            name: "ParleyConfig", dependencies: ["TOMLKit", "ParleyCore", "ParleyEndpoint", "ParleyRecognition"],
            path: "Sources/Config",
            swiftSettings: swiftSettings),
        .target(
            name: "ParleyProtocol", dependencies: ["ParleyCore"], path: "Sources/Protocol",
            swiftSettings: swiftSettings),
        // What answers the control protocol and fans events out, without a transport: the runtime
        // publishes through it, the socket and the caption page serve it.
        .target(
            name: "ParleyControl", dependencies: ["ParleyProtocol"], path: "Sources/Control", swiftSettings: swiftSettings),
        // The control socket (SwiftNIO, a Unix stream socket).
        .target(
            name: "ParleyControlSocket",
            dependencies: [
                "ParleyControl", "ParleyCore", "ParleyProtocol",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Sources/ControlSocket", swiftSettings: swiftSettings),
        .target(
            name: "ParleyWeb",
            dependencies: [
                "ParleyCore", "ParleyProtocol", "ParleyControl",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Sources/Web", swiftSettings: swiftSettings),
        // What `parley web` shows: the addresses a phone reaches, and a QR code of one.
        .target(
            name: "ParleyWebLink", dependencies: ["CQREncode"], path: "Sources/WebLink",
            swiftSettings: swiftSettings),
        .target(
            name: "ParleySystemd", dependencies: [.product(name: "Logging", package: "swift-log")], path: "Sources/Systemd",
            swiftSettings: swiftSettings),
        .target(
            name: "ParleyRuntime",
            dependencies: [
                "ParleyCore", "ParleyAudio", "ParleyEndpoint", "ParleyRecognition", "ParleyTranslation", "ParleySynthesis",
                "ParleyHistory", "ParleyConversation", "ParleyProtocol", "ParleyControl", "ParleyConfig",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Sources/Runtime", swiftSettings: swiftSettings),
        .target(
            name: "ParleyDaemon",
            dependencies: [
                "ParleyRuntime", "ParleyCore", "ParleyAudio", "ParleyEndpoint", "ParleyRecognition", "ParleyTranslation",
                "ParleySynthesis", "ParleyHistory", "ParleyConfig",
                "ParleyProtocol", "ParleyControl", "ParleyControlSocket", "ParleySystemd", "ParleyWeb",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            path: "Sources/Daemon", swiftSettings: swiftSettings),

        .target(
            name: "ParleyTesting",
            dependencies: [
                "ParleyRuntime", "ParleyCore", "ParleyAudio", "ParleyRecognition", "ParleySynthesis", "ParleyTranslation",
                "ParleyConfig", "ParleyControl", "ParleyHistory", "ParleyProtocol",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Sources/Testing", swiftSettings: swiftSettings),

        // MARK: - Executables (thin)
        .executableTarget(
            name: "parleyd",
            dependencies: [
                "ParleyDaemon", "ParleySystemd", "ParleyConfig", "ParleyCore", "ParleyRecognition", "ParleyProtocol",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Sources/parleyd", swiftSettings: swiftSettings),
        // The CLI's logic: its commands, the terminal, the watch view; `parley` only runs it.
        .target(
            name: "ParleyCLI",
            dependencies: [
                "ParleyProtocol", "ParleyCore", "ParleyWebLink",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Sources/CLI", swiftSettings: swiftSettings),
        .executableTarget(
            name: "parley",
            dependencies: ["ParleyCLI"],
            path: "Sources/parley", swiftSettings: swiftSettings,
            // Its release build (issue 28, docs/benchmarks.md "Under 15 MB"): the Swift driver
            // links executables with -export-dynamic, which puts the public symbols of the modules
            // linked in (2,500) into the dynamic symbol table, 230 kB of names nothing reads: the
            // CLI is not a library and loads none. And GNU ld packs the 40,000 relative
            // relocations of the PIE (960 kB) into 8 kB (DT_RELR, glibc 2.36: bookworm's); gold,
            // the driver's default linker, cannot.
            linkerSettings: [
                .unsafeFlags(
                    ["-Xlinker", "--no-export-dynamic", "-use-ld=bfd", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs"],
                    .when(platforms: [.linux], configuration: .release))
            ]),

        // MARK: - Tests
        // Two test targets (Tests/run/run-tests.sh, docs/architecture.md "Tests"):
        // ParleyTests, in memory: nothing outside the test process (no child process, no engine
        // model, no sound server, no browser); the in-memory engines of ParleyTesting. Seconds.
        .testTarget(
            name: "ParleyTests",
            dependencies: [
                "ParleyCore", "ParleyAudio", "ParleyEndpoint", "ParleyRecognition", "ParleyTranslation",
                "ParleyHistory", "ParleyConversation", "ParleyConfig", "ParleySynthesis",
                "ParleyProtocol", "ParleyControl", "ParleyControlSocket", "ParleyDaemon", "ParleySystemd", "ParleyRuntime",
                "ParleyTesting", "ParleyWeb", "ParleyCLI",
                .product(name: "NIOTestUtils", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            path: "Tests/ParleyTests", swiftSettings: swiftSettings),
        // ParleyEndToEndTests: the real binaries (parleyd, parley) and engines (PocketSphinx,
        // Moonshine, Whisper, Apertium, espeak-ng), PulseAudio, ALSA, Chromium, servers.
        .testTarget(
            name: "ParleyEndToEndTests",
            dependencies: [
                "ParleyCore", "ParleyAudio", "ParleyEndpoint", "ParleyRecognition", "ParleyTranslation",
                "ParleyHistory", "ParleyConversation", "ParleyConfig", "ParleySynthesis",
                "ParleyProtocol", "ParleyControl", "ParleyControlSocket", "ParleyDaemon", "ParleySystemd", "ParleyRuntime",
                "ParleyTesting", "ParleyWeb", "ParleyWebLink",
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            path: "Tests/ParleyEndToEndTests", swiftSettings: swiftSettings),
    ]
)
