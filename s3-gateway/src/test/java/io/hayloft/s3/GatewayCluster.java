package io.hayloft.s3;

import io.hayloft.client.DirectoryClient;
import io.hayloft.client.Futures;
import io.hayloft.client.http.HttpTransport;
import io.hayloft.directory.DirectoryConfig;
import io.hayloft.directory.DirectoryServer;
import io.hayloft.directory.raft.LocalGroup;
import io.hayloft.format.directory.StoreState;
import io.hayloft.serverkit.config.ConfigLoader;
import io.hayloft.store.StoreConfig;
import io.hayloft.store.StoreServer;
import io.hayloft.testkit.Await;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A real cluster for the gateway's tests, in this process: a directory (RocksDB; or a group of Raft
 * replicas, each over its own RocksDB), three stores on distinct racks registering by heartbeat
 * (volumes are made at the first lease), and an S3 gateway in front of them (more beside it:
 * {@link #addGateway}), every one on loopback with a free port. Neither the directory nor the stores
 * fsync (speed; the kill -9 tests run real processes elsewhere).
 * Not thread-safe: one test at a time drives its life cycle.
 */
public final class GatewayCluster implements AutoCloseable {
    public static final String ACCESS_KEY = "hayloft";
    public static final String SECRET_KEY = "hayloft-secret-key";
    public static final String REGION = "us-east-1";

    private final Path dir;
    private final DirectoryServer directory; // null when a group
    private final LocalGroup group; // null when one directory
    private final List<StoreServer> stores = new ArrayList<>();
    private final HttpTransport http = HttpTransport.builder().build();
    private final List<S3Server> added = new ArrayList<>();
    private S3Server gateway;

    private GatewayCluster(Path dir, DirectoryServer directory, LocalGroup group) {
        this.dir = dir;
        this.directory = directory;
        this.group = group;
    }

    /** Starts the directory and three stores, waits for writable volumes, then starts a gateway with {@code overrides}. */
    public static GatewayCluster start(Path dir, Map<String, String> overrides) throws Exception {
        GatewayCluster c = startCluster(dir);
        try {
            c.startGateway(overrides);
            return c;
        } catch (Exception | Error e) {
            c.close();
            throw e;
        }
    }

    /** Starts the directory and three stores and waits for them, without a gateway (tests of the data path). */
    public static GatewayCluster startCluster(Path dir) throws Exception {
        return startCluster(dir, 1);
    }

    /** As {@link #startCluster(Path)}; {@code directoryReplicas} above 1: a directory group of that many replicas (LocalGroup). */
    public static GatewayCluster startCluster(Path dir, int directoryReplicas) throws Exception {
        GatewayCluster c = directoryReplicas == 1
                ? new GatewayCluster(dir, DirectoryServer.start(directoryConfig(dir.resolve("directory")).validate()), null)
                : new GatewayCluster(dir, null, LocalGroup.builder(directoryReplicas, () -> {
                    DirectoryConfig dc = directoryConfig(dir.resolve("directory"));
                    dc.raft = new DirectoryConfig.Raft();
                    return dc;
                }, dir.resolve("directory")).start());
        try {
            for (int i = 0; i < 3; i++) {
                StoreConfig sc = new StoreConfig();
                sc.dataDirs = List.of(dir.resolve("store" + i).toString());
                sc.host = "127.0.0.1";
                sc.port = 0;
                sc.fsync = "never";
                sc.directory = c.directoryAddress();
                sc.rack = "rack" + i;
                sc.heartbeatMillis = 200;
                c.stores.add(StoreServer.start(sc.validate()));
            }
            DirectoryClient d = new DirectoryClient(c.http, c.group == null ? List.of(c.directory.address()) : c.group.addresses(), null);
            // Volumes are made by the directory at the first lease (minWritableVolumes).
            Await.untilTrue("three stores up", Duration.ofSeconds(60), () ->
                    Futures.await(d.stores()).stream().filter(s -> s.state() == StoreState.UP).count() == 3);
            return c;
        } catch (Exception | Error e) {
            c.close();
            throw e;
        }
    }

    /** A single directory's configuration (a group's replicas start from it; the group sets their places). */
    private static DirectoryConfig directoryConfig(Path data) {
        DirectoryConfig dc = new DirectoryConfig();
        dc.dataDir = data.toString();
        dc.host = "127.0.0.1";
        dc.port = 0;
        dc.init = true;
        dc.fsync = "never"; // as the stores: speed; durability is proven by the kill -9 tests on real processes
        dc.probeIntervalMillis = 500;
        return dc;
    }

    /** Starts (again) a gateway on a free port with the default user and {@code overrides}. */
    public S3Server startGateway(Map<String, String> overrides) throws Exception {
        if (gateway != null) {
            gateway.close();
        }
        gateway = S3Server.start(gatewayConfig(overrides));
        return gateway;
    }

    /** Starts one more gateway beside {@link #gateway()}, on the same directory and stores; closed with the cluster. */
    public S3Server addGateway(Map<String, String> overrides) throws Exception {
        S3Server g = S3Server.start(gatewayConfig(overrides));
        added.add(g);
        return g;
    }

    private S3Config gatewayConfig(Map<String, String> overrides) throws IOException {
        Map<String, String> o = new HashMap<>(Map.of("directory", directoryAddress(), "host", "127.0.0.1", "port", "0",
                "accessKey", ACCESS_KEY, "secretKey", SECRET_KEY, "region", REGION, "sweepIntervalMillis", "0"));
        o.putAll(overrides);
        return ConfigLoader.load(null, o, S3Config.class).validate();
    }

    public S3Server gateway() {
        return gateway;
    }

    /** {@code http://127.0.0.1:PORT}: the endpoint to give an S3 client (path-style). */
    public String endpoint() {
        return "http://127.0.0.1:" + gateway.port();
    }

    /** {@code host:port} of the directory; of a group, every replica's, comma-separated (as a gateway's {@code directory}). */
    public String directoryAddress() {
        return group == null ? directory.address() : String.join(",", group.addresses());
    }

    /** The directory; of a group, the replica that leads now. */
    public DirectoryServer directory() {
        return group == null ? directory : group.server(group.leader());
    }

    public List<StoreServer> stores() {
        return stores;
    }

    public Path dir() {
        return dir;
    }

    @Override
    public void close() {
        added.forEach(S3Server::close);
        if (gateway != null) {
            gateway.close();
        }
        for (StoreServer s : stores) {
            try {
                s.close();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (group == null) {
            directory.close();
        } else {
            group.close();
        }
    }
}
