package io.hayloft.s3;

import io.hayloft.client.DirectoryClient;
import io.hayloft.client.Futures;
import io.hayloft.client.http.HttpTransport;
import io.hayloft.directory.DirectoryConfig;
import io.hayloft.directory.DirectoryServer;
import io.hayloft.format.directory.StoreState;
import io.hayloft.serverkit.config.ConfigLoader;
import io.hayloft.store.StoreConfig;
import io.hayloft.store.StoreServer;
import io.hayloft.testkit.Await;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A real cluster for the gateway's tests, in this process: a directory (RocksDB), three stores on
 * distinct racks registering by heartbeat (volumes are made at the first lease), and an S3 gateway in front of them, every one on loopback
 * with a free port. Neither the directory nor the stores fsync (speed; the kill -9 tests run real processes elsewhere).
 * Not thread-safe: one test at a time drives its life cycle.
 */
public final class GatewayCluster implements AutoCloseable {
    public static final String ACCESS_KEY = "hayloft";
    public static final String SECRET_KEY = "hayloft-secret-key";
    public static final String REGION = "us-east-1";

    private final Path dir;
    private final DirectoryServer directory;
    private final List<StoreServer> stores = new ArrayList<>();
    private final HttpTransport http = HttpTransport.builder().build();
    private S3Server gateway;

    private GatewayCluster(Path dir, DirectoryServer directory) {
        this.dir = dir;
        this.directory = directory;
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
        DirectoryConfig dc = new DirectoryConfig();
        dc.dataDir = dir.resolve("directory").toString();
        dc.host = "127.0.0.1";
        dc.port = 0;
        dc.init = true;
        dc.fsync = "never"; // as the stores: speed; durability is proven by the kill -9 tests on real processes
        dc.probeIntervalMillis = 500;
        GatewayCluster c = new GatewayCluster(dir, DirectoryServer.start(dc.validate()));
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
            DirectoryClient d = new DirectoryClient(c.http, List.of(c.directoryAddress()), null);
            // Volumes are made by the directory at the first lease (minWritableVolumes).
            Await.untilTrue("three stores up", Duration.ofSeconds(60), () ->
                    Futures.await(d.stores()).stream().filter(s -> s.state() == StoreState.UP).count() == 3);
            return c;
        } catch (Exception | Error e) {
            c.close();
            throw e;
        }
    }

    /** Starts (again) a gateway on a free port with the default user and {@code overrides}. */
    public S3Server startGateway(Map<String, String> overrides) throws Exception {
        if (gateway != null) {
            gateway.close();
        }
        Map<String, String> o = new HashMap<>(Map.of("directory", directoryAddress(), "host", "127.0.0.1", "port", "0",
                "accessKey", ACCESS_KEY, "secretKey", SECRET_KEY, "region", REGION, "sweepIntervalMillis", "0"));
        o.putAll(overrides);
        gateway = S3Server.start(ConfigLoader.load(null, o, S3Config.class).validate());
        return gateway;
    }

    public S3Server gateway() {
        return gateway;
    }

    /** {@code http://127.0.0.1:PORT}: the endpoint to give an S3 client (path-style). */
    public String endpoint() {
        return "http://127.0.0.1:" + gateway.port();
    }

    public String directoryAddress() {
        return directory.address();
    }

    public DirectoryServer directory() {
        return directory;
    }

    public List<StoreServer> stores() {
        return stores;
    }

    public Path dir() {
        return dir;
    }

    @Override
    public void close() {
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
        directory.close();
    }
}
