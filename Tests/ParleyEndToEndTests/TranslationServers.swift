import ParleyCore
import Foundation
import Testing
import ParleyTranslation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A misbehaving translation server on a loopback port: a small Python http.server that
/// answers `/translate` (LibreTranslate's POST and APy's GET alike) as `mode` says, and counts
/// the requests it got (`GET /count`). `GET /mode?set=MODE` changes its behaviour.
///
/// Modes: `hang` (never answers), `500`, `429` (Retry-After: `argument` seconds, or none when
/// empty), `403`, `close` (closes the connection without a word), `echo` (answers the text
/// reversed, so a test can tell a real answer from a made-up one), `huge` (a 3 MiB answer),
/// `huge-unsized` (the same without Content-Length), `long` (the reversed text 30 times),
/// `slow` (echoes after `argument` seconds, 5 if empty), `held` (echoes once the test lets the
/// requests waiting go: `release(after:)`). `GET /languages` answers as a LibreTranslate server
/// with English, Spanish and Chinese would.
final class FaultServer: @unchecked Sendable {
    let process = Process()
    let port: Int
    var url: URL { URL(string: "http://127.0.0.1:\(port)")! }

    static let script = #"""
        import json, socket, sys, threading, time
        from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler
        from urllib.parse import urlparse, parse_qs

        state = {"mode": sys.argv[1], "arg": sys.argv[2] if len(sys.argv) > 2 else "", "count": 0, "key": None}
        lock = threading.Lock()
        # `held` requests wait for the next release (GET /release).
        releases = threading.Condition()
        released = [0]

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def reply(self, code, body, headers=None):
                data = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def translate(self, q, key):
                with lock:
                    state["count"] += 1
                    state["key"] = key
                    mode, arg = state["mode"], state["arg"]
                if mode == "hang":
                    time.sleep(3600)
                elif mode == "500":
                    self.reply(500, {"error": "internal trouble"})
                elif mode == "429":
                    self.reply(429, {"error": "slow down"}, {"Retry-After": arg} if arg else {})
                elif mode == "403":
                    self.reply(403, {"error": "forbidden"})
                elif mode == "slow":
                    time.sleep(float(arg or "5"))
                    self.reply(200, {"translatedText": q[::-1], "responseData": {"translatedText": q[::-1]}})
                elif mode == "held":
                    with releases:
                        mine = released[0]
                        releases.wait_for(lambda: released[0] > mine)
                    self.reply(200, {"translatedText": q[::-1], "responseData": {"translatedText": q[::-1]}})
                elif mode == "huge":
                    self.reply(200, {"translatedText": "a" * (3 << 20), "responseData": {"translatedText": "a" * (3 << 20)}})
                elif mode == "huge-unsized":
                    # No Content-Length: the body ends when the connection closes.
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Connection", "close")
                    self.end_headers()
                    self.wfile.write(json.dumps({"translatedText": "a" * (3 << 20), "responseData": {"translatedText": "a" * (3 << 20)}}).encode())
                    self.close_connection = True
                elif mode == "long":
                    text = (q[::-1] + " ") * 30
                    self.reply(200, {"translatedText": text, "responseData": {"translatedText": text}})
                elif mode == "close":
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                else:
                    self.reply(200, {"translatedText": q[::-1], "responseData": {"translatedText": q[::-1]}})

            def do_GET(self):
                url = urlparse(self.path)
                query = parse_qs(url.query)
                if url.path == "/count":
                    with lock:
                        return self.reply(200, {"count": state["count"], "key": state["key"]})
                if url.path == "/release":
                    with releases:
                        released[0] += 1
                        releases.notify_all()
                    return self.reply(200, {"ok": True})
                if url.path == "/mode":
                    with lock:
                        state["mode"] = query.get("set", ["echo"])[0]
                    return self.reply(200, {"ok": True})
                if url.path == "/translate":
                    return self.translate(query.get("q", [""])[0], query.get("key", [None])[0])
                if url.path == "/languages":
                    return self.reply(200, [
                        {"code": "en", "name": "English", "targets": ["es", "zh-Hans"]},
                        {"code": "es", "name": "Spanish", "targets": ["en"]},
                        {"code": "zh-Hans", "name": "Chinese", "targets": ["en"]}])
                self.reply(404, {"error": "no such path"})

            def do_POST(self):
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                if urlparse(self.path).path == "/translate":
                    return self.translate(body.get("q", ""), body.get("api_key"))
                self.reply(404, {"error": "no such path"})

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        print(server.server_address[1], flush=True)
        server.serve_forever()
        """#

    init(_ mode: String, _ argument: String = "") async throws {
        let script = FileManager.default.temporaryDirectory.appendingPathComponent("parley-fault-server-\(UUID()).py")
        try Self.script.write(to: script, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: script) }
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [script.path, mode, argument]
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try ProcessLauncher.run(process)
        // The script is read at start-up; the first line out is the port. It is read on a thread
        // of its own: blocking one of the concurrency pool's few threads would stall other tests.
        let reader = output.fileHandleForReading
        let line: Data = await withCheckedContinuation { continuation in
            Thread {
                var line = Data()
                while !line.contains(UInt8(ascii: "\n")) {
                    let chunk = reader.availableData
                    if chunk.isEmpty { break }
                    line.append(chunk)
                }
                continuation.resume(returning: line)
            }.start()
        }
        port = try #require(Int(String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)), "the fault server did not start")
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// How many translation requests the server got, and the API key of the last one.
    func count() async throws -> (requests: Int, key: String?) {
        struct Count: Decodable {
            var count: Int
            var key: String?
        }
        let (data, _) = try await URLSession.shared.data(from: url.appendingPathComponent("count"))
        let count = try JSONDecoder().decode(Count.self, from: data)
        return (count.count, count.key)
    }

    /// In `held` mode: waits until the server has had `requests` translation requests in all,
    /// then lets every one waiting answer.
    func release(after requests: Int) async throws {
        while try await count().requests < requests { try await Task.sleep(for: .milliseconds(20)) }
        _ = try await URLSession.shared.data(from: url.appendingPathComponent("release"))
    }

    func setMode(_ mode: String) async throws {
        _ = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(port)/mode?set=\(mode)")!)
    }
}

/// A real Apertium APy server on a free loopback port, serving the eng-spa and spa-eng pairs.
final class ApyServer: @unchecked Sendable {
    let process = Process()
    let port: Int
    private let modes: URL
    var url: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// Starts APy and waits (up to 90 s: a busy machine is slow to start Python) until it answers
    /// /listPairs.
    init(port wanted: Int? = nil) async throws {
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/apertium-apy"), "install apertium-apy")
        port = try wanted ?? freeLoopbackPort()
        // Only the two pairs the tests use, so APy starts fast.
        modes = FileManager.default.temporaryDirectory.appendingPathComponent("parley-apy-modes-\(UUID())")
        try FileManager.default.createDirectory(at: modes, withIntermediateDirectories: true)
        for pair in ["eng-spa", "spa-eng"] {
            try FileManager.default.createSymbolicLink(
                atPath: modes.appendingPathComponent("\(pair).mode").path, withDestinationPath: "/usr/share/apertium/modes/\(pair).mode")
        }
        process.executableURL = URL(fileURLWithPath: "/usr/bin/apertium-apy")
        process.arguments = ["-p", "\(port)", modes.path]
        var environment = ProcessInfo.processInfo.environment
        environment["LC_ALL"] = "C.UTF-8"
        process.environment = environment
        process.currentDirectoryURL = modes
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try ProcessLauncher.run(process)
        let deadline = Date(timeIntervalSinceNow: 90)
        let probe = URL(string: "http://127.0.0.1:\(port)/listPairs")!
        while Date() < deadline {
            if let (_, response) = try? await URLSession.shared.data(from: probe), (response as? HTTPURLResponse)?.statusCode == 200 {
                return
            }
            try await Task.sleep(for: .milliseconds(200))
        }
        Issue.record("apertium-apy did not answer on port \(port) within 90 s")
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: modes)
    }
}

/// A TCP port on 127.0.0.1 that nothing listens on (the kernel's pick, released at once).
func freeLoopbackPort() throws -> Int {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    try #require(descriptor >= 0)
    defer { close(descriptor) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
    }
    try #require(bound == 0)
    let named = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
    }
    try #require(named == 0)
    return Int(UInt16(bigEndian: address.sin_port))
}
