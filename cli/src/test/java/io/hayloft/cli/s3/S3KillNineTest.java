package io.hayloft.cli.s3;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.hayloft.cli.Hayloft;
import io.hayloft.cli.cluster.ClusterOptions;
import io.hayloft.cli.cluster.EmbeddedCluster;
import io.hayloft.cli.deploy.DeployedProcesses;
import io.hayloft.client.DirectoryClient;
import io.hayloft.client.Futures;
import io.hayloft.client.HayloftClient;
import io.hayloft.client.HayloftException;
import io.hayloft.client.NamespaceClient;
import io.hayloft.client.http.HttpTransport;
import io.hayloft.directory.Namespace;
import io.hayloft.format.directory.GroupInfo;
import io.hayloft.format.directory.StoreState;
import io.hayloft.format.s3.Bucket;
import io.hayloft.format.s3.Chunk;
import io.hayloft.format.s3.Listing;
import io.hayloft.format.s3.ObjectRecord;
import io.hayloft.format.s3.Pending;
import io.hayloft.format.wire.VolumeIndex;
import io.hayloft.s3.S3Config;
import io.hayloft.serverkit.config.Ports;
import io.hayloft.store.Store;
import io.hayloft.store.volume.Volume;
import io.hayloft.testkit.Await;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.awscore.retry.AwsRetryStrategy;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.CompletedPart;
import software.amazon.awssdk.services.s3.model.MultipartUpload;
import software.amazon.awssdk.services.s3.model.NoSuchKeyException;

/**
 * Nothing lost, nothing left behind, with real processes: a {@code hayloft cluster} and a gateway
 * started as {@code hayloft s3} with docs/deploy's unit and s3.yaml (only the directory, port, chunk
 * size and sweep limits overridden), uploads by the AWS SDK v2, and SIGKILL in the middle of a single
 * PUT and of a multipart part (their bodies block until the kill, after the gateway wrote chunks of
 * them). After a restart every acknowledged object reads back byte-exact and the interrupted ones are
 * absent; once the dangling uploads are aborted and {@code hayloft s3 sweep} has run, the stores hold
 * exactly the needles of the committed objects: counted in every volume's index of every store (the
 * cluster stopped, then opened in this process), no needle is left that no key refers to. The same
 * with the whole {@code hayloft cluster --s3} process killed mid-upload.
 *
 * <p>And with the directory's leader killed: a group of three {@code hayloft directory} replicas started
 * as docs/operations.md "A replicated directory" says (docs/deploy/directory-nN.yaml, fsync on), three
 * {@code hayloft store} processes and a gateway given all three replicas, eight SDK clients PUTting,
 * overwriting and deleting objects of every size class (empty, kept inline by the gateway, one chunk, two
 * chunks), and SIGKILL to the leader after 200 acknowledged PUTs. The writers go on until 200 more are
 * acknowledged (the group elected a new leader and the gateway found it); the old leader restarts with the
 * same command and rejoins. Then every key holds what {@link S3Writers}' model allows (the last
 * acknowledged write, or the failed one after it), byte-exact or 404; the directory names no needle for an
 * object kept inline, one per chunk for the others; after the sweep the three replicas hold the same
 * namespace (digests of the s3 families) and the stores exactly the needles of the committed objects.
 */
class S3KillNineTest {
    private static final int MIB = 1 << 20;
    private static final String BUCKET = "crash";
    /** The gateway's default {@code inlineBytes} (docs/s3.md): objects of 1 to this many bytes name no needle. */
    private static final int INLINE_BYTES = 4096;
    /** The gateway's {@code chunkBytes} in the leader-kill test (the smallest allowed): two chunks cost 64 KiB + 1. */
    private static final int CHUNK_BYTES = 64 * 1024;

    @TempDir
    Path dir;

    private Process cluster;
    private DeployedProcesses gateways;
    /** The directory group, the stores and the gateway of the leader-kill test. */
    private GroupDeployment group;
    private S3Writers writers;
    private final ExecutorService uploads = Executors.newCachedThreadPool();
    private final Random random = new Random(2727);
    private final Map<String, byte[]> acknowledged = new LinkedHashMap<>();

    @AfterEach
    void stop() throws Exception {
        if (writers != null) {
            writers.abandon();
        }
        uploads.shutdownNow();
        if (gateways != null) {
            gateways.stopAll(false);
        }
        if (group != null) {
            group.stop();
        }
        if (cluster != null && cluster.isAlive()) {
            cluster.destroyForcibly().waitFor(20, TimeUnit.SECONDS);
        }
    }

    private byte[] bytes(int n) {
        byte[] b = new byte[n];
        random.nextBytes(b);
        return b;
    }

    /**
     * Starts {@code hayloft cluster} with its directory on {@code port} (0: any free one at the first start,
     * the recorded one after) and {@code extra} arguments; returns what it printed before READY, by first word.
     */
    private Map<String, String> startCluster(int port, String... extra) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx768m",
                "-cp", System.getProperty("java.class.path"), Hayloft.class.getName(), "cluster", "--dir", dir.resolve("data").toString(),
                "--stores", "3", "--racks", "3", "--port", Integer.toString(port)));
        cmd.addAll(Arrays.asList(extra));
        cluster = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.appendTo(dir.resolve("cluster.log").toFile())).start();
        BufferedReader out = new BufferedReader(new InputStreamReader(cluster.getInputStream(), StandardCharsets.UTF_8));
        CompletableFuture<Map<String, String>> ready = CompletableFuture.supplyAsync(() -> {
            Map<String, String> lines = new LinkedHashMap<>();
            try {
                for (String line = out.readLine(); line != null; line = out.readLine()) {
                    if (line.equals("READY")) {
                        return lines;
                    }
                    int sp = line.indexOf(' ');
                    lines.putIfAbsent(sp < 0 ? line : line.substring(0, sp), sp < 0 ? "" : line.substring(sp + 1).trim());
                }
                throw new IllegalStateException("cluster ended before READY: " + DeployedProcesses.tail(dir.resolve("cluster.log")));
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        });
        return ready.get(90, TimeUnit.SECONDS);
    }

    /** Starts {@code hayloft s3} as its systemd unit does with docs/deploy/s3.yaml; returns its port. */
    private int startGateway(String name, String directory) throws Exception {
        return startingGateway(gateways, name, directory, MIB).get(60, TimeUnit.SECONDS);
    }

    /**
     * Starts {@code hayloft s3} among {@code processes} as {@link #startGateway} does, with chunks of
     * {@code chunkBytes}; completes with its port once it listens.
     */
    private static CompletableFuture<Integer> startingGateway(DeployedProcesses processes, String name, String directory,
                                                              int chunkBytes) throws Exception {
        List<String> args = new ArrayList<>(DeployedProcesses.execStart("hayloft-s3.service", ""));
        args.addAll(List.of("directory=" + directory, "host=127.0.0.1", "port=" + Ports.free(), "chunkBytes=" + chunkBytes,
                "sweepIntervalMillis=0"));
        return processes.start(name, args).thenApply(line -> {
            String address = line.substring(line.indexOf("listening on ") + "listening on ".length()).split(",")[0].trim();
            return Integer.parseInt(address.substring(address.lastIndexOf(':') + 1));
        });
    }

    private static String secretKey() throws IOException {
        return setting("s3.yaml", "secretKey");
    }

    /** The value of top-level {@code key} in docs/deploy/{@code file}. */
    private static String setting(String file, String key) throws IOException {
        for (String l : Files.readAllLines(DeployedProcesses.docs().resolve("deploy").resolve(file))) {
            if (l.startsWith(key + ":")) {
                return l.substring(key.length() + 1).trim();
            }
        }
        throw new AssertionError("docs/deploy/" + file + " has no " + key);
    }

    private static S3Client s3(String endpoint, String accessKey, String secretKey) {
        return S3Client.builder().endpointOverride(URI.create(endpoint)).region(Region.US_EAST_1).forcePathStyle(true)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(accessKey, secretKey)))
                .overrideConfiguration(o -> o.retryStrategy(AwsRetryStrategy.doNotRetry())
                        .apiCallTimeout(Duration.ofSeconds(60)))
                .build();
    }

    /** A body of {@code data} whose stream gives the first {@code prefix} bytes, then blocks until {@code killed}, then fails. */
    private static RequestBody blocking(byte[] data, int prefix, CountDownLatch killed) {
        return RequestBody.fromContentProvider(() -> new InputStream() {
            private int pos;

            @Override
            public int read() throws IOException {
                byte[] one = new byte[1];
                return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
            }

            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                if (pos >= prefix) {
                    try {
                        killed.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    throw new IOException("the gateway was killed");
                }
                int n = Math.min(len, prefix - pos);
                System.arraycopy(data, pos, b, off, n);
                pos += n;
                return n;
            }
        }, data.length, "application/octet-stream");
    }

    /** Objects acknowledged before the crash: a 0-byte, a 1-byte, one of several chunks, a multipart one. */
    private void uploadAcknowledged(S3Client s3, int partBytes) {
        s3.createBucket(b -> b.bucket(BUCKET));
        for (int size : new int[] {0, 1, 2 * MIB + 3}) {
            byte[] data = bytes(size);
            s3.putObject(b -> b.bucket(BUCKET).key("single-" + size), RequestBody.fromBytes(data));
            acknowledged.put("single-" + size, data);
        }
        byte[] first = bytes(partBytes);
        byte[] last = bytes(MIB + 5);
        String id = s3.createMultipartUpload(b -> b.bucket(BUCKET).key("multi")).uploadId();
        String e1 = s3.uploadPart(b -> b.bucket(BUCKET).key("multi").uploadId(id).partNumber(1), RequestBody.fromBytes(first)).eTag();
        String e2 = s3.uploadPart(b -> b.bucket(BUCKET).key("multi").uploadId(id).partNumber(2), RequestBody.fromBytes(last)).eTag();
        s3.completeMultipartUpload(b -> b.bucket(BUCKET).key("multi").uploadId(id).multipartUpload(m -> m.parts(
                CompletedPart.builder().partNumber(1).eTag(e1).build(), CompletedPart.builder().partNumber(2).eTag(e2).build())));
        byte[] whole = Arrays.copyOf(first, first.length + last.length);
        System.arraycopy(last, 0, whole, first.length, last.length);
        acknowledged.put("multi", whole);
    }

    /**
     * A single PUT and a part of a multipart upload (its first part acknowledged) whose bodies block
     * after {@code prefix} of {@code size} bytes; returns once the gateway has written at least
     * {@code chunks} chunks of each (two WRITING records that name them).
     */
    private List<CompletableFuture<?>> startInterruptedUploads(S3Client s3, String directory, NamespaceClient ns, int partBytes,
                                                              int size, int prefix, int chunks, CountDownLatch killed) throws Exception {
        String id = s3.createMultipartUpload(b -> b.bucket(BUCKET).key("dangling")).uploadId();
        s3.uploadPart(b -> b.bucket(BUCKET).key("dangling").uploadId(id).partNumber(1), RequestBody.fromBytes(bytes(partBytes)));
        byte[] single = bytes(size);
        byte[] part = bytes(size);
        List<CompletableFuture<?>> calls = List.of(
                CompletableFuture.runAsync(() -> s3.putObject(b -> b.bucket(BUCKET).key("interrupted"),
                        blocking(single, prefix, killed)), uploads),
                CompletableFuture.runAsync(() -> s3.uploadPart(b -> b.bucket(BUCKET).key("dangling").uploadId(id).partNumber(2),
                        blocking(part, prefix, killed)), uploads));
        // A chunk is named before its needle is written: wait for the needles themselves.
        try (HayloftClient client = HayloftClient.builder().directory(directory).build()) {
            Await.untilTrue("the gateway wrote " + chunks + " chunks of both bodies", Duration.ofSeconds(60), () -> {
                List<Pending> w = writing(ns).stream().filter(p -> p.chunks().size() >= chunks).toList();
                return w.size() == 2 && w.stream().allMatch(p -> p.chunks().stream().limit(chunks).allMatch(c -> stored(client, c)));
            });
        }
        return calls;
    }

    /** Whether some replica holds the chunk's needle. */
    private static boolean stored(HayloftClient client, Chunk c) {
        try {
            return !client.stat(c.photo()).alts().isEmpty();
        } catch (HayloftException e) {
            return false;
        }
    }

    private static List<Pending> writing(NamespaceClient ns) {
        return Futures.await(ns.pendings(null, 1000)).stream().filter(p -> p.state().equals(Pending.WRITING)).toList();
    }

    /** After the crash: every acknowledged object byte-exact, the interrupted one absent; the dangling upload aborted. */
    private void checkAndAbort(S3Client s3) {
        for (Map.Entry<String, byte[]> e : acknowledged.entrySet()) {
            assertThat(s3.getObjectAsBytes(b -> b.bucket(BUCKET).key(e.getKey())).asByteArray()).as(e.getKey()).isEqualTo(e.getValue());
        }
        byte[] multi = acknowledged.get("multi");
        int from = multi.length - MIB - 7; // across the parts' edge
        assertThat(s3.getObjectAsBytes(b -> b.bucket(BUCKET).key("multi").range("bytes=" + from + "-" + (from + 9))).asByteArray())
                .isEqualTo(Arrays.copyOfRange(multi, from, from + 10));
        assertThat(catchThrowable(() -> s3.headObject(b -> b.bucket(BUCKET).key("interrupted")))).isNotNull();
        assertThat(catchThrowable(() -> s3.getObject(b -> b.bucket(BUCKET).key("interrupted")))).isInstanceOf(NoSuchKeyException.class);
        List<MultipartUpload> dangling = s3.listMultipartUploads(b -> b.bucket(BUCKET)).uploads();
        assertThat(dangling).extracting(MultipartUpload::key).containsExactly("dangling");
        for (MultipartUpload u : dangling) {
            s3.abortMultipartUpload(b -> b.bucket(BUCKET).key(u.key()).uploadId(u.uploadId()));
        }
        assertThat(s3.listMultipartUploads(b -> b.bucket(BUCKET)).uploads()).isEmpty();
    }

    /** {@code hayloft s3 sweep --config docs/deploy/s3.yaml directory=... orphanAfterMillis=1000} until no pending record is left. */
    private long sweepUntilClean(String directory, NamespaceClient ns) throws Exception {
        List<String> args = new ArrayList<>(List.of("s3", "sweep", "--config", DeployedProcesses.docs().resolve("deploy/s3.yaml").toString(),
                "directory=" + directory, "orphanAfterMillis=1000"));
        long[] deleted = {0};
        Await.untilTrue("every pending record swept", Duration.ofSeconds(60), () -> {
            StringWriter out = new StringWriter();
            int exit = new CommandLine(new Hayloft()).setOut(new PrintWriter(out)).execute(args.toArray(String[]::new));
            assertThat(exit).as(out.toString()).isZero();
            assertThat(out.toString()).matches("(?s)\\d+ needles deleted\\s*");
            deleted[0] += Long.parseLong(out.toString().trim().split(" ")[0]);
            return Futures.await(ns.pendings(null, 10)).isEmpty();
        });
        return deleted[0];
    }

    /** Stops the processes (SIGTERM), opens the cluster's data in this process, and returns the needles no object refers to. */
    private Set<String> orphansOnTheStores() throws Exception {
        if (gateways != null) {
            gateways.stopAll(false);
            gateways = null;
        }
        cluster.destroy();
        assertThat(cluster.waitFor(60, TimeUnit.SECONDS)).isTrue();
        try (EmbeddedCluster c = EmbeddedCluster.start(ClusterOptions.of(dir.resolve("data")).withStores(3, 3).withFsync(false))) {
            Namespace ns = c.directory().directory().namespace();
            assertThat(ns.pendings(null, 10)).as("pending records").isEmpty();
            assertThat(ns.uploadsBefore(Long.MAX_VALUE, 10)).as("uploads").isEmpty();
            Set<String> named = named(committed(ns.buckets(), ns::list));
            List<Store> stores = new ArrayList<>();
            for (int i = 0; i < c.storeCount(); i++) {
                stores.add(c.store(i).store());
            }
            return orphans(named, live(stores));
        }
    }

    /** One page of a bucket's listing: {@link Namespace#list}, or {@link NamespaceClient#list} awaited. */
    private interface Pages {
        Listing list(String bucket, String prefix, String delimiter, String after, int max);
    }

    /** Every committed object of {@code buckets}, read page by page. */
    private static List<ObjectRecord> committed(List<Bucket> buckets, Pages pages) {
        List<ObjectRecord> objects = new ArrayList<>();
        for (Bucket b : buckets) {
            String after = null;
            while (true) {
                Listing page = pages.list(b.name(), "", null, after, 1000);
                objects.addAll(page.objects());
                if (!page.truncated()) {
                    break;
                }
                after = page.next();
            }
        }
        return objects;
    }

    /** The needles {@code objects} name, as {@code volume/key}. */
    private static Set<String> named(List<ObjectRecord> objects) {
        Set<String> named = new TreeSet<>();
        for (ObjectRecord o : objects) {
            o.chunks().forEach(ch -> named.add(ch.volume() + "/" + Long.toUnsignedString(ch.key())));
        }
        return named;
    }

    /** The needles that are not deleted in any volume index of {@code stores}, as {@code volume/key}, with how many stores hold each. */
    private static Map<String, Integer> live(List<Store> stores) throws IOException {
        Map<String, Integer> live = new LinkedHashMap<>();
        for (Store s : stores) {
            for (Volume v : s.volumes()) {
                for (VolumeIndex.Entry e : v.indexListing()) {
                    if (!e.deleted()) {
                        live.merge(v.id() + "/" + Long.toUnsignedString(e.key()), 1, Integer::sum);
                    }
                }
            }
        }
        return live;
    }

    /** Checks that every needle in {@code named} is on all three stores; returns the live needles that no object names. */
    private static Set<String> orphans(Set<String> named, Map<String, Integer> live) {
        assertThat(named).as("every committed chunk is on the stores").isNotEmpty().allMatch(n -> live.getOrDefault(n, 0) == 3);
        Set<String> orphans = new TreeSet<>(live.keySet());
        orphans.removeAll(named);
        return orphans;
    }

    @Test
    void killingTheGatewayMidUploadLosesNothingAcknowledgedAndTheSweepLeavesNoOrphan() throws Exception {
        gateways = new DeployedProcesses(dir, "-Xmx512m");
        // The cluster and the gateway start side by side (the gateway asks nothing of the directory before
        // its first request): the directory's port is chosen first.
        int directoryPort = Ports.free();
        String directory = "127.0.0.1:" + directoryPort;
        CompletableFuture<Integer> gateway = startingGateway(gateways, "s3", directory, MIB);
        assertThat(startCluster(directoryPort).get("DIRECTORY")).isEqualTo(directory);
        NamespaceClient ns = new NamespaceClient(new DirectoryClient(HttpTransport.builder().build(), List.of(directory), null));
        int port = gateway.get(60, TimeUnit.SECONDS);
        CountDownLatch killed = new CountDownLatch(1);
        List<CompletableFuture<?>> interrupted;
        try (S3Client s3 = s3("http://127.0.0.1:" + port, "hayloft", secretKey())) {
            uploadAcknowledged(s3, 5 * MIB);
            interrupted = startInterruptedUploads(s3, directory, ns, 5 * MIB, 4 * MIB, 3 * MIB, 2, killed);
            gateways.process("s3").destroyForcibly(); // SIGKILL
            assertThat(gateways.process("s3").waitFor(20, TimeUnit.SECONDS)).isTrue();
            killed.countDown();
            for (CompletableFuture<?> f : interrupted) {
                assertThat(catchThrowable(f::join)).as("an upload the kill interrupted fails").isNotNull();
            }
        }
        assertThat(writing(ns)).as("the interrupted uploads' records, left for the sweep").hasSize(2);
        int again = startGateway("s3-again", directory);
        try (S3Client s3 = s3("http://127.0.0.1:" + again, "hayloft", secretKey())) {
            checkAndAbort(s3);
        }
        long deleted = sweepUntilClean(directory, ns);
        assertThat(deleted).as("needles of the interrupted bodies (and of the aborted part, unless the gateway freed it first)")
                .isGreaterThanOrEqualTo(4);
        assertThat(orphansOnTheStores()).as("needles no object refers to").isEmpty();
    }

    @Test
    void killingTheWholeClusterMidUploadLosesNothingAcknowledgedAndTheSweepLeavesNoOrphan() throws Exception {
        Map<String, String> printed = startCluster(0, "--s3", "0");
        String directory = printed.get("DIRECTORY");
        NamespaceClient ns = new NamespaceClient(new DirectoryClient(HttpTransport.builder().build(), List.of(directory), null));
        String endpoint = printed.get("S3").split(" ")[0];
        CountDownLatch killed = new CountDownLatch(1);
        // The embedded gateway keeps the default 8 MiB chunks: bodies of 10 MiB stopped after 9 MiB have one chunk written.
        try (S3Client s3 = s3(endpoint, printed.get("S3_ACCESS_KEY"), printed.get("S3_SECRET_KEY"))) {
            uploadAcknowledged(s3, 9 * MIB);
            List<CompletableFuture<?>> interrupted = startInterruptedUploads(s3, directory, ns, 5 * MIB, 10 * MIB, 9 * MIB, 1, killed);
            cluster.destroyForcibly(); // SIGKILL: directory, stores and gateway at once
            assertThat(cluster.waitFor(20, TimeUnit.SECONDS)).isTrue();
            assertThat(cluster.exitValue()).isEqualTo(137);
            killed.countDown();
            for (CompletableFuture<?> f : interrupted) {
                assertThat(catchThrowable(f::join)).isNotNull();
            }
        }
        printed = startCluster(0, "--s3", "0");
        assertThat(printed.get("DIRECTORY")).as("the directory keeps its port").isEqualTo(directory);
        assertThat(writing(ns)).as("the interrupted uploads' records survived the kill").hasSize(2);
        try (S3Client s3 = s3(printed.get("S3").split(" ")[0], printed.get("S3_ACCESS_KEY"), printed.get("S3_SECRET_KEY"))) {
            checkAndAbort(s3);
        }
        assertThat(sweepUntilClean(directory, ns)).isGreaterThanOrEqualTo(2);
        assertThat(orphansOnTheStores()).as("needles no object refers to").isEmpty();
    }

    @Test
    @Timeout(value = 4, unit = TimeUnit.MINUTES) // a hang fails (the @AfterEach still stops everything); a run takes 30 to 60 s
    void killingTheDirectoryLeaderMidPutsLosesNothingAcknowledgedAndTheSweepLeavesNoOrphan() throws Exception {
        assertThat(new S3Config().inlineBytes).as("the default inlineBytes, which docs/deploy/s3.yaml keeps").isEqualTo(INLINE_BYTES);
        String token = setting("directory-n1.yaml", "adminToken");
        group = new GroupDeployment(dir, "-Xmx256m", "-XX:TieredStopAtLevel=1");
        long start = System.nanoTime();
        group.startReplicas();
        DirectoryClient directory = new DirectoryClient(HttpTransport.builder().build(), group.replicas(), token);
        NamespaceClient ns = new NamespaceClient(directory);
        GroupDeployment.healthyGroup(directory);
        CompletableFuture<Integer> gateway = startingGateway(group.processes(), "s3", group.directory(), CHUNK_BYTES);
        group.startStores();
        // Volumes are created at the first lease, once the three stores are UP.
        Await.until("three stores UP", Duration.ofSeconds(60), Duration.ofMillis(100), () -> {
            try {
                return Futures.await(directory.stores()).stream().filter(st -> st.state() == StoreState.UP).count() == 3;
            } catch (RuntimeException notYet) {
                return false;
            }
        });
        int port = gateway.get(60, TimeUnit.SECONDS);
        try (S3Client s3 = s3("http://127.0.0.1:" + port, "hayloft", secretKey())) {
            s3.createBucket(b -> b.bucket(BUCKET));
            writers = new S3Writers(s3, BUCKET, 0, 1, 100, INLINE_BYTES, INLINE_BYTES + 1, CHUNK_BYTES, CHUNK_BYTES + 1);
            long started = System.nanoTime();
            writers.start(8, 4711, uploads);
            awaitPuts(200);
            GroupInfo before = GroupDeployment.healthyGroup(directory);
            String leader = group.idOf(before.leaderReplica().http());
            assertThat(group.kill(leader)).as("exit status of the leader %s after SIGKILL", leader).isEqualTo(137);
            long killed = System.nanoTime();
            awaitPuts(writers.acknowledgedPuts() + 200); // a new leader, and the gateway found it
            long recovered = System.nanoTime();
            writers.stop(90);
            group.restart(leader); // the same command; it catches up from the new leader
            GroupInfo after = GroupDeployment.healthyGroup(directory);
            int keys = writers.check(s3);
            System.out.printf("deployed in %d ms; leader %s killed %d ms after the writers started (term %d), %s leads after (term %d);"
                    + " 200 more PUTs in %d ms; %d PUTs acknowledged, %s; %d keys checked (%d ms since the start)%n",
                    ms(started - start), leader, ms(killed - started), before.term(), after.leader(), after.term(), ms(recovered - killed),
                    writers.acknowledgedPuts(), writers.failures(), keys, ms(System.nanoTime() - start));
        }
        System.out.printf("the sweep deleted %d needles%n", sweepUntilClean(group.directory(), ns));
        Await.until("the three replicas hold the same namespace", Duration.ofSeconds(60), Duration.ofMillis(200), () -> {
            List<Map<String, String>> digests = group.replicas().stream().map(r -> GroupDeployment.namespaceDigest(r, token)).toList();
            return digests.stream().allMatch(d -> d != null && !d.isEmpty()) && digests.stream().distinct().count() == 1;
        });
        assertThat(Futures.await(ns.uploadsBefore(Long.MAX_VALUE, 10))).as("uploads").isEmpty();
        List<ObjectRecord> committed = committed(Futures.await(ns.buckets()),
                (b, prefix, delimiter, after, max) -> Futures.await(ns.list(b, prefix, delimiter, after, max)));
        Map<String, Set<S3Writers.Body>> model = writers.model();
        for (ObjectRecord o : committed) {
            assertThat(model.getOrDefault(o.key(), Set.of())).as("the model of key %s, committed with %d bytes", o.key(), o.size())
                    .anyMatch(body -> body.size() == o.size());
            long chunks = o.size() <= INLINE_BYTES ? 0 : (o.size() + CHUNK_BYTES - 1) / CHUNK_BYTES;
            assertThat(o.chunks()).as("chunks of key %s, %d bytes", o.key(), o.size()).hasSize((int) chunks);
        }
        assertThat(committed).as("committed objects kept inline").anyMatch(ObjectRecord::inlined);
        Set<String> named = named(committed);
        group.stop(); // SIGTERM: the stores close their volumes
        List<Store> stores = group.openStores();
        try {
            assertThat(orphans(named, live(stores))).as("needles no object refers to").isEmpty();
        } finally {
            stores.forEach(Store::close);
        }
    }

    private static long ms(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(nanos);
    }

    /** Waits until the writers have {@code count} PUTs acknowledged. */
    private void awaitPuts(long count) throws InterruptedException {
        Await.until(count + " PUTs acknowledged", Duration.ofSeconds(60), Duration.ofMillis(20), () -> {
            writers.rethrowIfBroken();
            return writers.acknowledgedPuts() >= count;
        });
    }
}
