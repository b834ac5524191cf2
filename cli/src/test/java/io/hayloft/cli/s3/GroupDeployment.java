package io.hayloft.cli.s3;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.hayloft.cli.deploy.DeployedProcesses;
import io.hayloft.client.DirectoryClient;
import io.hayloft.client.Futures;
import io.hayloft.format.directory.GroupInfo;
import io.hayloft.serverkit.config.ConfigLoader;
import io.hayloft.serverkit.config.Ports;
import io.hayloft.store.Store;
import io.hayloft.store.StoreConfig;
import io.hayloft.testkit.Await;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * A cluster whose directory is a group of three replicas, every server a separate process started as
 * docs/deploy's units start them: replicas {@code n1..n3} as docs/operations.md "A replicated directory"
 * says (the unit's arguments, {@code --init}, docs/deploy/directory-nN.yaml as written but for the
 * replicas' addresses, on loopback ports, and each one's {@code dataDir}), and stores {@code store-1..3}
 * with docs/deploy/store.yaml on racks of their own, given the three replicas' addresses. Not thread-safe
 * (one test's setup).
 */
final class GroupDeployment {
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Path dir;
    private final DeployedProcesses processes;
    private final List<List<String>> replicaCommands = new ArrayList<>();
    private final List<String> replicas = new ArrayList<>();

    /** A deployment whose data and logs go under {@code dir}, its processes started with the JVM options {@code jvm}. */
    GroupDeployment(Path dir, String... jvm) {
        this.dir = dir;
        this.processes = new DeployedProcesses(dir, jvm);
    }

    /** The processes, to start more (a gateway) among them. */
    DeployedProcesses processes() {
        return processes;
    }

    /** The replicas' HTTP addresses, n1 first. */
    List<String> replicas() {
        return List.copyOf(replicas);
    }

    /** The replicas' HTTP addresses as the {@code directory} setting of the other servers lists them. */
    String directory() {
        return String.join(",", replicas);
    }

    /** Starts the three replicas and waits until each listens. */
    void startReplicas() throws Exception {
        int[] raft = new int[3];
        int[] http = new int[3];
        for (int i = 0; i < 3; i++) {
            raft[i] = Ports.free();
            http[i] = Ports.free();
        }
        List<CompletableFuture<String>> started = new ArrayList<>();
        for (int i = 1; i <= 3; i++) {
            String yaml = Files.readString(DeployedProcesses.docs().resolve("deploy/directory-n" + i + ".yaml"));
            for (int j = 1; j <= 3; j++) {
                yaml = yaml.replace("10.0.0." + j + ":7100", "127.0.0.1:" + raft[j - 1])
                        .replace("10.0.0." + j + ":7000", "127.0.0.1:" + http[j - 1]);
            }
            Path config = dir.resolve("directory-n" + i + ".yaml");
            Files.writeString(config, yaml);
            replicas.add("127.0.0.1:" + http[i - 1]);
            List<String> args = new ArrayList<>();
            for (String a : DeployedProcesses.execStart("hayloft-directory.service", "")) {
                args.add(a.endsWith("directory.yaml") ? config.toString() : a);
            }
            args.add("--init"); // HAYLOFT_ARGS=--init: the same command starts and restarts a replica
            args.add("dataDir=" + dir.resolve("n" + i + "-data"));
            replicaCommands.add(args);
            started.add(processes.start("n" + i, args));
        }
        for (CompletableFuture<String> f : started) {
            f.get(90, TimeUnit.SECONDS);
        }
    }

    /** Starts the three stores and waits until each listens. */
    void startStores() throws Exception {
        List<CompletableFuture<String>> started = new ArrayList<>();
        for (int i = 1; i <= 3; i++) {
            int port = Ports.free();
            List<String> args = new ArrayList<>(DeployedProcesses.execStart("hayloft-store@.service", Integer.toString(i)));
            args.addAll(List.of(dataDirs(i), "port=" + port, "advertiseAddress=127.0.0.1:" + port, "rack=rack-" + i,
                    "directory=" + directory()));
            started.add(processes.start("store-" + i, args));
        }
        for (CompletableFuture<String> f : started) {
            f.get(90, TimeUnit.SECONDS);
        }
    }

    /** The {@code dataDirs} override of store {@code instance}: two disks, as in docs/deploy/store.yaml. */
    private String dataDirs(int instance) {
        Path data = dir.resolve("store-" + instance);
        return "dataDirs=" + data.resolve("disk1") + "," + data.resolve("disk2");
    }

    /** SIGKILL to replica {@code id} ({@code n1..n3}); returns once it is gone, with its exit status. */
    int kill(String id) throws InterruptedException {
        Process p = processes.process(id);
        p.destroyForcibly();
        if (!p.waitFor(20, TimeUnit.SECONDS)) {
            throw new AssertionError(id + " still runs 20 s after SIGKILL");
        }
        return p.exitValue();
    }

    /** Starts replica {@code id} again with the command that started it first; waits until it listens. */
    void restart(String id) throws Exception {
        int i = Integer.parseInt(id.substring(1)) - 1;
        processes.start(id, replicaCommands.get(i)).get(90, TimeUnit.SECONDS);
    }

    /** The replica id ({@code n1..n3}) whose HTTP address is {@code http}. */
    String idOf(String http) {
        int i = replicas.indexOf(http);
        if (i < 0) {
            throw new AssertionError(http + " is none of the replicas " + replicas);
        }
        return "n" + (i + 1);
    }

    /** Stops every process with SIGTERM, the replicas last; one that hangs is killed. Again: nothing. */
    void stop() throws InterruptedException {
        processes.stopAll(false);
    }

    /** Opens the stores' data in this process (the store processes stopped): the same config and data directories. */
    List<Store> openStores() throws IOException {
        List<Store> stores = new ArrayList<>();
        try {
            for (int i = 1; i <= 3; i++) {
                stores.add(new Store(ConfigLoader.load(DeployedProcesses.docs().resolve("deploy/store.yaml"), List.of(dataDirs(i)),
                        StoreConfig.class)));
            }
            return stores;
        } catch (IOException | RuntimeException e) {
            stores.forEach(Store::close);
            throw e;
        }
    }

    /** Waits until the group has a leader and every replica is LEADER or FOLLOWER (as {@code hayloft directory group} shows it). */
    static GroupInfo healthyGroup(DirectoryClient directory) throws InterruptedException {
        GroupInfo[] seen = {null};
        Await.until("a leader and two followers", Duration.ofSeconds(60), Duration.ofMillis(100), () -> {
            try {
                seen[0] = Futures.await(directory.group());
            } catch (RuntimeException noAnswer) {
                return false;
            }
            GroupInfo.Replica leader = seen[0].leaderReplica();
            return leader != null && leader.role().equals("LEADER")
                    && seen[0].replicas().stream().map(GroupInfo.Replica::role).sorted().toList()
                    .equals(List.of("FOLLOWER", "FOLLOWER", "LEADER"));
        });
        return seen[0];
    }

    /**
     * The digests of the s3 families of {@code replica}'s database ({@code GET /v1/state} with the admin
     * token), or null when it does not answer. Replicas that applied the same namespace changes answer equal maps.
     */
    static Map<String, String> namespaceDigest(String replica, String token) {
        try {
            HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create("http://" + replica + "/v1/state"))
                    .header("Authorization", "Bearer " + token).timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != 200) {
                return null;
            }
            Map<String, String> digests = new TreeMap<>();
            JSON.readTree(r.body()).path("families").fields().forEachRemaining(f -> {
                if (f.getKey().startsWith("s3-")) {
                    digests.put(f.getKey(), f.getValue().toString());
                }
            });
            return digests;
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }
}
