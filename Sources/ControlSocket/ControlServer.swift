import Foundation
import Logging
import NIOCore
import NIOPosix
import ParleyControl
import ParleyCore
import ParleyProtocol
import Synchronization

/// Linux's `struct ucred` (pid_t, uid_t, gid_t), which Swift's Glibc module does not export.
struct PeerCredentials: Sendable {
    var pid: Int32 = 0
    var uid: UInt32 = 0
    var gid: UInt32 = 0
}

/// The control socket: JSON Lines over a Unix stream socket.
///
/// Each connection is served on its own task; a client that sends garbage gets an error reply
/// and cannot disturb the others.
public final class ControlServer: Sendable {
    public let path: String
    private let handler: any ControlHandler
    private let logger: Logger
    private let connected = Atomic<Int>(0)
    /// Connections beyond `maxClients` waiting to ask `status` or `version`.
    private let overLimit = Atomic<Int>(0)
    /// At most this many extra connections wait to ask; the rest are refused at once, so a
    /// flood of connections cannot hold descriptors for long.
    public static let maxWaitingOverLimit = 256
    /// Refusals are logged at most once a second.
    private let refusalLog: RateLimit
    /// Connections served at once; the next one is answered `too_many_clients` and closed.
    public static let maxClients = 64

    /// How many connections the kernel queues before they are accepted (capped by
    /// net.core.somaxconn). Clients that connect without blocking (Go, Node, Python with a
    /// timeout) get EAGAIN when the queue is full, so it is deep, and accepting never waits for
    /// a connection to be served.
    public static let listenBacklog = 4096
    /// Connections accepted in one go when the listening socket is readable.
    static let acceptsPerRead = 256
    /// How long a connection may stay idle (no request in flight, no subscription) by default.
    public static let defaultIdleTimeout: Duration = .seconds(30)

    /// A listening socket handed over by systemd (socket activation); nil to create `path`.
    private let inherited: Int32?
    /// The group given the socket file the server creates, if it exists.
    private let group: String?
    /// A connection idle this long is told `idle_timeout` and closed; nil: never.
    private let idleTimeout: Duration?
    private let onListening: @Sendable () -> Void

    /// What `drain` needs: the listening channel and the connections being served.
    private struct Open {
        var listener: (any Channel)?
        var connections: [ObjectIdentifier: (channel: any Channel, activity: ConnectionActivity)] = [:]
        var draining = false
        /// Closes every connection once `drainTimeout` has passed; cancelled when `run` returns.
        var drainTimer: Task<Void, Never>?
    }
    private let open = Mutex(Open())
    /// How long `drain` lets requests in flight finish by default.
    public static let defaultDrainTimeout: Duration = .seconds(3)
    /// How long `drain` lets requests in flight finish before it closes their connections.
    private let drainTimeout: Duration
    /// What the idle timeout, stuck replies, the drain and the refusal log are timed by.
    private let clock: ParleyClock

    public init(
        path: String, inheritedSocket: Int32? = nil, group: String? = nil, idleTimeout: Duration? = ControlServer.defaultIdleTimeout,
        handler: any ControlHandler, logger: Logger, drainTimeout: Duration = ControlServer.defaultDrainTimeout,
        clock: ParleyClock = .continuous, onListening: @escaping @Sendable () -> Void = {}
    ) {
        self.path = path
        self.clock = clock
        self.refusalLog = RateLimit(once: .seconds(1), clock: clock)
        self.drainTimeout = drainTimeout
        self.inherited = inheritedSocket
        self.group = group
        self.idleTimeout = idleTimeout
        self.handler = handler
        self.logger = logger
        self.onListening = onListening
    }

    /// Binds the socket (or takes systemd's) and serves until the task is cancelled; a socket file
    /// the server created is removed on the way out.
    public func run() async throws {
        let initializer: @Sendable (any Channel) -> EventLoopFuture<(NIOAsyncChannel<ByteBuffer, ByteBuffer>, Peer?)> = { channel in
            let credentials: EventLoopFuture<Peer?> =
                (channel as? any SocketOptionProvider)?
                .unsafeGetSocketOption(level: .socket, name: .init(rawValue: SO_PEERCRED))
                .map { (value: PeerCredentials) -> Peer? in Peer(pid: value.pid, uid: value.uid, gid: value.gid) }
                .recover { _ in nil }
                ?? channel.eventLoop.makeSucceededFuture(nil)
            return credentials.flatMapThrowing { peer in
                // A connection that comes in once the drain has begun is closed here, before it
                // is wrapped: the accept loop may already have ended, and a wrapped connection
                // nobody serves would be dropped unfinished (NIO stops the process on that).
                if self.open.withLock(\.draining) {
                    channel.close(promise: nil)
                    throw ChannelError.ioOnClosedChannel
                }
                try channel.pipeline.syncOperations.addHandler(
                    ByteToMessageHandler(LineDecoder(maxLength: maxLineBytes)))
                return (try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel), peer)
            }
        }
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: Int32(Self.listenBacklog))
            .serverChannelOption(.maxMessagesPerRead, value: UInt(Self.acceptsPerRead))
            // A request followed at once by a half-close (`nc -N`) is still answered.
            .childChannelOption(.allowRemoteHalfClosure, value: true)
        // Accepted connections are handed to `serve` as fast as they come; the slot limit is
        // applied there, never by leaving connections in the kernel's queue.
        let accepted = NIOAsyncSequenceProducerBackPressureStrategies.HighLowWatermark(
            lowWatermark: Self.acceptsPerRead, highWatermark: Self.acceptsPerRead * 4)
        let server: NIOAsyncChannel<(NIOAsyncChannel<ByteBuffer, ByteBuffer>, Peer?), Never>
        if let inherited {
            // systemd made the socket (and its mode and group) and keeps it between restarts.
            server = try await bootstrap.bind(inherited, serverBackPressureStrategy: accepted, childChannelInitializer: initializer)
            logger.info("control socket handed over by systemd", metadata: ["path": "\(path)"])
        } else {
            try Self.prepareDirectory(for: path)
            server = try await bootstrap.bind(
                unixDomainSocketPath: path, cleanupExistingSocketFile: true, serverBackPressureStrategy: accepted,
                childChannelInitializer: initializer)
            chmod(path, 0o660)
            giveToGroup()
            logger.info("control socket listening", metadata: ["path": "\(path)"])
        }
        let created = inherited == nil
        defer { if created { unlink(path) } }
        defer { open.withLock { $0.drainTimer }?.cancel() }
        let drainingAlready = open.withLock { open in
            open.listener = server.channel
            return open.draining
        }
        // Drained before it listened (a stop during start-up): it never says it is ready.
        if drainingAlready { server.channel.close(promise: nil) } else { onListening() }
        try await withThrowingDiscardingTaskGroup { group in
            try await server.executeThenClose { connections in
                for try await (connection, peer) in connections {
                    // A place is taken here, in the order connections are accepted, not when
                    // the connection's task first runs: the one over the limit is the last.
                    let admitted = connected.add(1, ordering: .relaxed).newValue <= Self.maxClients
                    if !admitted { connected.subtract(1, ordering: .relaxed) }
                    group.addTask { await self.serve(connection, peer: peer, admitted: admitted) }
                }
            }
        }
    }

    /// Serves one connection; one not `admitted` (over `maxClients`) is only told so.
    private func serve(_ connection: NIOAsyncChannel<ByteBuffer, ByteBuffer>, peer: Peer?, admitted: Bool) async {
        guard admitted else {
            // Not served: it does not take a client's place while it is answered.
            let waiting = overLimit.add(1, ordering: .relaxed).newValue
            defer { overLimit.subtract(1, ordering: .relaxed) }
            await serveOverLimit(connection, peer: peer, mayAsk: waiting <= Self.maxWaitingOverLimit)
            return
        }
        defer { connected.subtract(1, ordering: .relaxed) }
        let activity = ConnectionActivity(clock: clock)
        let key = ObjectIdentifier(activity)
        let draining = open.withLock { open in
            open.connections[key] = (connection.channel, activity)
            return open.draining
        }
        defer { _ = open.withLock { $0.connections.removeValue(forKey: key) } }
        if draining { connection.channel.close(promise: nil) }
        connection.channel.closeFuture.whenComplete { _ in activity.markGone() }
        do {
            try await connection.executeThenClose { inbound, outbound in
                // Replies and events share the writer; a client that does not read holds up
                // only its own event pump, whose bounded subscription then drops levels first.
                try await withThrowingTaskGroup(of: Void.self) { group in
                    var subscription: Subscription?
                    defer { subscription?.cancel() }
                    // Finished when the event pump ends (the subscription ended or a write failed).
                    let pumpEnded = AsyncStream<Void>.makeStream()
                    if let idleTimeout = self.idleTimeout {
                        group.addTask {
                            try await self.closeWhenIdle(connection.channel, outbound: outbound, activity: activity, after: idleTimeout)
                        }
                    }
                    var inputEnded = false
                    do {
                        requests: for try await line in inbound {
                            guard activity.begin() else { break }
                            // The client leaving frees its place at once; the request's work
                            // (a `say` being stored) goes on without it.
                            guard let answer = await activity.reply({ await self.reply(to: line, from: peer) }) else { break requests }
                            activity.writing()
                            switch answer {
                            case .line(let reply):
                                try await outbound.write(Self.frame(reply))
                            case .subscribe(let reply, let events):
                                try await outbound.write(Self.frame(reply))
                                if subscription == nil {
                                    subscription = events
                                    activity.subscribed(events)
                                    group.addTask {
                                        defer { pumpEnded.continuation.finish() }
                                        while let event = await events.next() {
                                            try await outbound.write(Self.frame(event))
                                        }
                                    }
                                } else {
                                    events.cancel()
                                }
                            }
                            activity.end()
                            if isDraining { break requests }
                        }
                        inputEnded = true
                    } catch is LineDecoder.LineTooLong {
                        let reply = Replies.error(
                            .lineTooLong, "request longer than \(maxLineBytes) bytes; send one JSON object per line", id: nil)
                        try? await outbound.write(Self.frame(reply))
                    }
                    if inputEnded && subscription != nil && !activity.isGone && !isDraining {
                        // A subscriber that half-closed (`nc -N`) still gets its events, until it
                        // goes away (the channel closes, which ends the subscription). Not the
                        // idle watchdog, which may sleep on.
                        for await _ in pumpEnded.stream {}
                    }
                    subscription?.cancel()
                    group.cancelAll()
                }
            }
        } catch {
            logger.debug("control connection ended", metadata: ["error": "\(error)"])
        }
    }

    /// Graceful shutdown: no new connection is taken; connections with no request in flight
    /// (subscribers too) are closed now, the others once their reply is written, so a client
    /// waiting for a stored turn (`say`) gets its answer. After `drainTimeout` every connection is
    /// closed. `run` returns once all are closed. A request that arrives just as the drain
    /// starts may find its connection closed, as if its client had left; its work goes on.
    public func drain() {
        let (first, listener, idle) = open.withLock { open in
            defer { open.draining = true }
            return (!open.draining, open.listener, open.connections.values.filter { !$0.activity.isBusy }.map(\.channel))
        }
        listener?.close(promise: nil)
        for channel in idle { channel.close(promise: nil) }
        guard first else { return }
        let timer = Task { [self] in
            guard (try? await clock.sleep(for: drainTimeout)) != nil else { return }
            for channel in open.withLock({ $0.connections.values.map(\.channel) }) { channel.close(promise: nil) }
        }
        open.withLock { $0.drainTimer = timer }
    }

    private var isDraining: Bool { open.withLock { $0.draining } }

    /// How many connections have a request in flight (received, its reply not yet written to
    /// the end). A client has its reply a moment before the server counts the write done: a test
    /// that moves the server's clock waits for this to fall to 0 first.
    public var busyConnections: Int { open.withLock { $0.connections.values.filter { $0.activity.isBusy }.count } }

    /// Tells a connection that has been idle for `timeout` so, and closes it; closes one whose
    /// reply could not be written for as long (a client that sends and never reads). Returns
    /// when the connection can no longer become idle (it subscribed, or it is gone).
    private func closeWhenIdle(
        _ channel: any Channel, outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>, activity: ConnectionActivity, after timeout: Duration
    ) async throws {
        while let deadline = activity.idleDeadline(timeout) {
            try await clock.sleep(until: deadline)
            switch activity.verdict(timeout) {
            case .active:
                continue
            case .idle:
                let reply = Replies.error(
                    .idleTimeout, "no request for \(timeout.components.seconds) s, so the connection is closed; connect again to send one",
                    id: nil)
                // Told if it can be told within a second (a client that reads nothing cannot),
                // then closed; closing ends a write still waiting.
                await withTaskGroup(of: Void.self) { group in
                    group.addTask { try? await outbound.write(Self.frame(reply)) }
                    group.addTask { [clock] in try? await clock.sleep(for: .seconds(1)) }
                    _ = await group.next()
                    group.cancelAll()
                    try? await channel.close()
                }
            case .stuck:
                logger.debug("control connection closed: its replies were not read for \(timeout.components.seconds) s")
                try? await channel.close()
            }
            return
        }
    }

    /// How long an extra connection may take to ask.
    static let overLimitWait: Duration = .seconds(1)

    /// A connection beyond `maxClients`: one request sent within
    /// `overLimitWait` whose command is `answeredOverLimit` (`status`, `version`) is answered;
    /// anything else, or nothing, gets `too_many_clients`. Either way the connection is then closed.
    private func serveOverLimit(_ connection: NIOAsyncChannel<ByteBuffer, ByteBuffer>, peer: Peer?, mayAsk: Bool) async {
        try? await connection.executeThenClose { inbound, outbound in
            let first: ByteBuffer? = !mayAsk ? nil : await withTaskGroup(of: ByteBuffer?.self) { group in
                group.addTask {
                    var lines = inbound.makeAsyncIterator()
                    return try? await lines.next()
                }
                group.addTask { [clock] in
                    try? await clock.sleep(for: Self.overLimitWait)
                    return nil
                }
                let winner = await group.next() ?? nil
                group.cancelAll()
                return winner
            }
            if let first, let request = try? Request(line: Data(first.readableBytesView)),
                request.command.name.answeredOverLimit, case .line(let reply) = await handler.reply(to: request, from: peer)
            {
                try await outbound.write(Self.frame(reply))
                return
            }
            if refusalLog.take() {
                logger.warning("control connection refused: too many clients", metadata: ["peer": "\(peer?.description ?? "unknown")"])
            }
            try await outbound.write(
                Self.frame(
                    Replies.error(
                        .tooManyClients, "\(Self.maxClients) clients are connected already; close one and try again", id: nil)))
        }
    }

    private static func frame(_ line: Data) -> ByteBuffer {
        var buffer = ByteBuffer(bytes: line)
        buffer.writeInteger(UInt8(ascii: "\n"))
        return buffer
    }

    private func reply(to line: ByteBuffer, from peer: Peer?) async -> ControlReply {
        let request: Request
        do {
            request = try Request(line: Data(line.readableBytesView))
        } catch {
            return .line(Replies.error(error))
        }
        return await handler.reply(to: request, from: peer)
    }

    /// Gives the socket to `group` (0660), so its members can use `parley` without being root or
    /// the daemon's user. A group that does not exist, or that this process may not give files
    /// to, leaves the socket to the daemon's own group.
    private func giveToGroup() {
        guard let group, !group.isEmpty else { return }
        guard let entry = getgrnam(group) else {
            logger.debug("no group \(group); the control socket keeps the daemon's group", metadata: ["path": "\(path)"])
            return
        }
        let gid = entry.pointee.gr_gid
        var info = stat()
        // Under the systemd unit (Group=parley) the socket is born in the group already.
        if stat(path, &info) == 0 && info.st_gid == gid { return }
        if chown(path, uid_t.max, gid) != 0 {
            logger.warning(
                "cannot give the control socket to group \(group): \(String(cString: strerror(errno))); run parleyd with that group (Group=\(group) in its unit) or add its user to the group",
                metadata: ["path": "\(path)"])
        }
    }

    /// Creates the socket's folder (0750) when it does not exist.
    static func prepareDirectory(for path: String) throws {
        let folder = (path as NSString).deletingLastPathComponent
        guard !folder.isEmpty, !FileManager.default.fileExists(atPath: folder) else { return }
        try FileManager.default.createDirectory(
            atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o750])
    }
}
