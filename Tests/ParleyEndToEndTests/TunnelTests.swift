import Foundation
import ParleyCore
import ParleyHistory
import ParleyTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// OpenSSH, as the LAN recipe uses it (docs/architecture.md, "A stronger machine on the LAN,
/// privately"): a server of its own on loopback, with keys made for the test.
enum OpenSSH {
    static let installed = ["/usr/sbin/sshd", "/usr/bin/ssh", "/usr/bin/ssh-keygen"].allSatisfy { FileManager.default.isExecutableFile(atPath: $0) }
    /// sshd needs root for its privilege separation (`make test` runs as root, as CI does).
    static let asRoot = geteuid() == 0

    /// A TCP port nothing listens on now (the kernel's choice for port 0).
    static func freePort() throws -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        try #require(bound, "no free port: \(String(cString: strerror(errno)))")
        return UInt16(bigEndian: address.sin_port)
    }

    /// Starts `arguments` with posix_spawn, not Foundation's `Process`: sshd and ssh close every
    /// descriptor they inherit as they start, Foundation's way of seeing a child exit among them,
    /// and Foundation then waits for them to exit on the thread that sees every other child's
    /// exit (parleyd's exit went unseen). Stopped with `stop`.
    static func spawn(_ arguments: [String]) throws -> pid_t {
        let null = open("/dev/null", O_RDWR | O_CLOEXEC)
        defer { close(null) }
        return try ProcessLauncher.withLock { ProcessLauncher.spawn(arguments, stdin: null, stdout: null, stderrToNull: true) }.get()
    }

    /// Ends a process `spawn` started, and reaps it.
    static func stop(_ pid: pid_t, _ signal: Int32 = SIGKILL) {
        kill(pid, signal)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
    }

    /// Whether something accepts connections on 127.0.0.1:`port`, waiting up to `seconds` (a
    /// guard against a hung test only).
    static func accepts(_ port: UInt16, within seconds: Double = 60) async -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        while Date() < deadline {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
            }
            close(fd)
            if connected { return true }
            try? await Task.sleep(for: .milliseconds(100))
        }
        return false
    }
}

/// The LAN recipe, end to end: the Whisper server listens on loopback only, an SSH tunnel
/// carries parleyd's audio to it (encrypted, both ends authenticated by keys), and parleyd
/// names only its end of the tunnel. When the tunnel is down, the turn falls to the local
/// engines and one line says why.
@Suite(
    "A server on the LAN through an SSH tunnel", .startsProcesses,
    .enabled(if: OpenSSH.installed, "install openssh-server and openssh-client (make test's packages)"),
    .enabled(if: OpenSSH.asRoot, "sshd needs root for its privilege separation; run as root"),
    .enabled(if: AccurateEngines.installed, "run `make engines` first"))
struct TunnelTests {
    @Test func aSpanishTurnIsHeardByTheServerThroughTheTunnelAndByTheLocalEnginesWithout() async throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        // Keys and a server configuration of the test's own.
        for key in ["host", "user"] {
            let made = try EndToEnd.run("/usr/bin/ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", dir.appendingPathComponent(key).path], in: dir)
            try #require(made.status == 0, "\(made.stderr)")
        }
        try FileManager.default.copyItem(at: dir.appendingPathComponent("user.pub"), to: dir.appendingPathComponent("authorized_keys"))
        let sshPort = try OpenSSH.freePort()
        try """
            Port \(sshPort)
            ListenAddress 127.0.0.1
            HostKey \(dir.path)/host
            AuthorizedKeysFile \(dir.path)/authorized_keys
            PidFile \(dir.path)/sshd.pid
            PasswordAuthentication no
            KbdInteractiveAuthentication no
            PermitRootLogin prohibit-password
            AllowTcpForwarding local
            StrictModes no
            UsePAM no
            """.write(to: dir.appendingPathComponent("sshd_config"), atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: "/run/sshd", withIntermediateDirectories: true)
        let sshdLog = dir.appendingPathComponent("sshd.log")
        let sshd = try OpenSSH.spawn(["/usr/sbin/sshd", "-D", "-E", sshdLog.path, "-f", dir.appendingPathComponent("sshd_config").path])
        defer { OpenSSH.stop(sshd) }
        try #require(await OpenSSH.accepts(sshPort), "sshd did not listen: \((try? String(contentsOf: sshdLog, encoding: .utf8)) ?? "")")

        // The server on the stronger machine: loopback only.
        let whisperPort = try OpenSSH.freePort()
        let folder = AccurateEngines.folder + "/whisper"
        let (server, _, serverLog) = try EndToEnd.start(
            "/usr/bin/python3",
            [folder + "/parley-whisper", "--model", folder + "/base", "--python-path", folder + "/python", "--uri", "tcp://127.0.0.1:\(whisperPort)"],
            in: dir, tag: "whisper")
        defer { if server.isRunning { kill(server.processIdentifier, SIGKILL) } }
        try #require(await OpenSSH.accepts(whisperPort), "the Whisper server did not listen: \((try? String(contentsOf: serverLog, encoding: .utf8)) ?? "")")

        // The Pi's end of the tunnel.
        let tunnelPort = try OpenSSH.freePort()
        let tunnelLog = dir.appendingPathComponent("ssh.log")
        let tunnel = try OpenSSH.spawn(
            [
                "/usr/bin/ssh", "-N", "-E", tunnelLog.path, "-o", "ExitOnForwardFailure=yes", "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
                "-i", dir.appendingPathComponent("user").path, "-p", String(sshPort), "-L", "127.0.0.1:\(tunnelPort):127.0.0.1:\(whisperPort)",
                "root@127.0.0.1",
            ])
        var tunnelUp = true
        defer { if tunnelUp { OpenSSH.stop(tunnel) } }
        try #require(await OpenSSH.accepts(tunnelPort), "the tunnel did not open: \((try? String(contentsOf: tunnelLog, encoding: .utf8)) ?? "")")

        let clip = OfflineLanguages.spanish + "/fleurs-es-006.wav"
        let reference = try OfflineLanguages.reference(clip)
        func heard(_ name: String) async throws -> (turns: [TurnRecord], stderr: String) {
            let run = dir.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: run, withIntermediateDirectories: true)
            let config = try EndToEnd.writeConfig(
                in: run,
                extra: "[conversation]\nspeaker_a = \"es\"\nspeaker_b = \"en\"\nmode = \"one-way\"\n" + EndToEnd.spanishRecognizer + "\n"
                    + AccurateEngines.table + "\nserver = \"tcp://127.0.0.1:\(tunnelPort)\"")
            let input = try EndToEnd.conversation([clip], gap: 8, in: run)
            let result = try EndToEnd.runFileMode(config: config, input: input.path, output: run.appendingPathComponent("out.wav").path, in: run)
            #expect(result.status == 0, "stderr: \(result.stderr)")
            let history = try AppDatabase.open(path: run.appendingPathComponent("history.sqlite").path)
            let turns = Array(try await history.recentTurns(limit: 10).reversed())
            return (turns, result.stderr)
        }

        let through = try await heard("through")
        let turn = try #require(through.turns.first, "no turn: \(through.stderr)")
        #expect(turn.engine == "whisper@127.0.0.1:\(tunnelPort)", "\(turn.engine ?? "no engine"): \(through.stderr)")
        #expect(EndToEnd.wordRecall(turn.sourceText, reference: reference) >= 0.6, "heard \"\(turn.sourceText)\"")

        // The tunnel goes down: the local engines hear the turn, and the log says why.
        OpenSSH.stop(tunnel, SIGTERM)
        tunnelUp = false
        let without = try await heard("without")
        let local = try #require(without.turns.first, "no turn: \(without.stderr)")
        #expect(local.engine != "whisper@127.0.0.1:\(tunnelPort)")
        #expect(!local.sourceText.isEmpty)
        #expect(without.stderr.contains("cannot reach the speech server 127.0.0.1:\(tunnelPort)"), "\(without.stderr)")
    }
}
