package io.hayloft.store.http;

import io.hayloft.client.http.AddressList;
import io.hayloft.client.http.HttpTransport;
import io.hayloft.cold.ClusterBlockWrites;
import io.hayloft.cold.ClusterReads;
import io.hayloft.cold.ClusterRpc;
import io.hayloft.cold.StripeEncoder;
import io.hayloft.erasure.CodecKind;
import io.hayloft.format.errors.ApiException;
import io.hayloft.format.errors.CommonErrors;
import io.hayloft.format.errors.StoreErrors;
import io.hayloft.format.io.PositionalIo;
import io.hayloft.format.wire.StripeMap;
import io.hayloft.format.wire.Wire;
import io.hayloft.serverkit.http.HttpResponses;
import io.hayloft.store.Store;
import io.hayloft.store.block.BlockStore;
import io.hayloft.store.volume.Volume;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.buffer.ByteBufInputStream;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code POST /admin/volumes/{id}/encode-stripe} (docs/store-api.md, docs/raid.md "Encoding on the
 * stores"): a store holding a sealed replica encodes one stripe of it where the bytes are. It reads its
 * own volume file with positional reads ({@link Volume#openRaw}, held open through a compaction), once
 * for the data units (streamed in {@code transferBytes} chunks to their targets: written straight into
 * this store's {@link BlockStore} when the target is this store, else written into one streamed
 * {@code PUT /blocks/<name>} to the target store as the copy produces them, the CRC32C the target
 * answers compared with this store's) and once more for the parity (the streaming codec reads the units from the file; the page cache
 * usually serves it), writes the parity units into block files here (the final block when this store is
 * the target, else a temporary file streamed to the target and deleted), and answers every unit's CRC32C
 * and the stripe's candidate needles. The work is {@link StripeEncoder}, the raid-node's own core.
 *
 * <p>Never a whole block on the heap: one chunk per unit in flight. Data units go out
 * {@link #UNIT_THREADS} at a time. At most {@link #MAX_CONCURRENT} stripes encode at once per store
 * (more: 503 OVERLOADED; the raid-node asks again later: every stripe of a volume comes from one replica). Idempotent: blocks of the same names
 * left by an earlier attempt are replaced.
 *
 * <p>Thread-safe.
 */
final class StripeEncodeEndpoint {
    private static final Logger LOG = LoggerFactory.getLogger(StripeEncodeEndpoint.class);
    /** Stripes encoded at once on one store. */
    static final int MAX_CONCURRENT = 4;
    /** Runs between the data pass and the parity pass; tests set it to change the volume there. */
    static volatile Runnable betweenPasses = () -> { };
    /** Units of one stripe read and sent at once. */
    static final int UNIT_THREADS = 4;
    /** Largest chunk: the store's default request body limit. */
    static final int MAX_TRANSFER = 64 << 20;

    private final Store store;
    private final ClusterRpc peers;
    private final Semaphore running = new Semaphore(MAX_CONCURRENT);
    private final Counter stripes;
    private final Counter readBytes;
    private final Counter sentBytes;
    private final Counter localBytes;
    private final AtomicInteger threads = new AtomicInteger();
    private final String directory;

    /**
     * @param directory the directory's host:port, or its replicas' as a comma-separated list, asked whether the
     *                  job is still planned; null: never asked
     */
    StripeEncodeEndpoint(Store store, HttpTransport peers, MeterRegistry registry, String directory) {
        this.store = store;
        this.directory = directory;
        this.peers = peers.clusterRpc();
        this.stripes = Counter.builder("hayloft_encode_stripes").description("stripes this store encoded from its own replicas")
                .register(registry);
        this.readBytes = Counter.builder("hayloft_encode_read_bytes").description("volume bytes read by stripe encodes")
                .register(registry);
        this.sentBytes = Counter.builder("hayloft_encode_sent_bytes").description("block bytes stripe encodes sent to other stores")
                .register(registry);
        this.localBytes = Counter.builder("hayloft_encode_local_bytes")
                .description("block bytes stripe encodes wrote into this store's own block store").register(registry);
    }

    FullHttpResponse handle(FullHttpRequest req, long volumeId) throws Exception {
        Wire.EncodeStripeRequest r = parse(req);
        Volume v = store.volume(volumeId);
        if (!v.readOnly()) {
            throw StoreErrors.VOLUME_NOT_SEALED.exception("volume " + volumeId + " is writable on this store; only a sealed "
                    + "(read-only) replica can be encoded: seal it first (POST /admin/volumes/" + volumeId + "/seal)");
        }
        long size = v.status().sizeBytes();
        if (size != r.volumeSize()) {
            throw StoreErrors.VOLUME_SIZE_MISMATCH.exception("volume " + volumeId + " is " + size + " bytes on this store; the "
                    + "request planned volumeSize " + r.volumeSize());
        }
        if (!running.tryAcquire()) {
            throw CommonErrors.OVERLOADED.exception("this store is already encoding " + MAX_CONCURRENT + " stripes; try again later");
        }
        try (Volume.RawRange raw = v.openRaw(0, size)) {
            String holder = r.holder() != null && !r.holder().isBlank() ? r.holder() : req.headers().get(HttpHeaderNames.HOST);
            // The data units and the parity are two reads of the file: a delete flag written between
            // them would leave a parity that does not match its data. Checked before the blocks commit.
            long before = v.modifications();
            Runnable unchanged = () -> {
                long now = v.modifications();
                long sizeNow = v.status().sizeBytes();
                if (now != before || sizeNow != size) {
                    throw StoreErrors.VOLUME_CHANGED.exception("volume " + volumeId + " changed on this store while stripe " + r.stripe()
                            + " was encoded (" + (now - before) + " changes, " + size + " -> " + sizeNow + " bytes); encode the stripe again");
                }
            };
            Wire.EncodeStripeResult res = encode(volumeId, r, raw.channel(), holder, req.headers().get(HttpHeaderNames.AUTHORIZATION),
                    unchanged);
            stripes.increment();
            LOG.info("volume {} stripe {} of job {} encoded here: {} bytes read, {} sent", volumeId, r.stripe(), r.job(),
                    res.bytesRead(), res.bytesSent());
            return HttpResponses.json(HttpResponseStatus.OK, res);
        } finally {
            running.release();
        }
    }

    /** The request, checked field by field: a bad one is a 400 naming the field. */
    private static Wire.EncodeStripeRequest parse(FullHttpRequest req) {
        Wire.EncodeStripeRequest r;
        try {
            r = HttpTransport.JSON.readValue((InputStream) new ByteBufInputStream(req.content().duplicate()), Wire.EncodeStripeRequest.class);
        } catch (IOException | RuntimeException e) {
            throw bad("body is not an encode-stripe request (JSON Wire.EncodeStripeRequest): " + e.getMessage());
        }
        if (r == null) {
            throw bad("body is empty; send a JSON Wire.EncodeStripeRequest");
        }
        try {
            CodecKind.fromWireName(r.codec());
        } catch (RuntimeException e) {
            throw bad("codec must be rs, hh-xor, hh-xor+ or hh-nonxor, got '" + r.codec() + "'");
        }
        if (r.k() < 1 || r.r() < 1 || r.k() + r.r() > 64) {
            throw bad("k and r must be >= 1 with k + r <= 64, were k=" + r.k() + " r=" + r.r());
        }
        if (r.blockSize() < 8 || r.blockSize() % 8 != 0) {
            throw bad("blockSize must be a positive multiple of 8, was " + r.blockSize());
        }
        if (r.volumeSize() < 0) {
            throw bad("volumeSize must be >= 0, was " + r.volumeSize());
        }
        if (r.transferBytes() < 4096 || r.transferBytes() > MAX_TRANSFER) {
            throw bad("transferBytes must be in 4096.." + MAX_TRANSFER + ", was " + r.transferBytes());
        }
        long blocks = Math.max(1, r.volumeSize() / r.blockSize() + (r.volumeSize() % r.blockSize() == 0 ? 0 : 1));
        long stripeCount = (blocks + r.k() - 1) / r.k();
        if (r.stripe() < 0 || r.stripe() >= stripeCount) {
            throw bad("stripe must be in 0.." + (stripeCount - 1) + " for a volume of " + r.volumeSize() + " bytes, was " + r.stripe());
        }
        if (r.targets() == null || r.targets().size() != r.k() + r.r()) {
            throw bad("targets must list k + r = " + (r.k() + r.r()) + " blocks, got "
                    + (r.targets() == null ? "none" : r.targets().size()));
        }
        Set<String> names = new HashSet<>();
        for (int u = 0; u < r.targets().size(); u++) {
            Wire.EncodeTarget t = r.targets().get(u);
            if (t == null || t.address() == null || !t.address().matches("[A-Za-z0-9._\\-\\[\\]:]{1,300}:[0-9]{1,5}")) {
                throw bad("targets[" + u + "].address must be host:port, got " + (t == null ? "null" : "'" + t.address() + "'"));
            }
            try {
                BlockStore.checkName(t.name());
            } catch (RuntimeException e) {
                throw bad("targets[" + u + "].name: " + e.getMessage());
            }
            if (!names.add(t.address() + "/" + t.name())) {
                throw bad("targets[" + u + "] repeats block " + t.name() + " on " + t.address());
            }
        }
        return r;
    }

    private static ApiException bad(String message) {
        return StoreErrors.BAD_ARGUMENT.exception(message);
    }

    private Wire.EncodeStripeResult encode(long volumeId, Wire.EncodeStripeRequest r, FileChannel file, String holder,
                                           String authorization, Runnable unchanged) throws IOException {
        int k = r.k();
        int n = k + r.r();
        long b = r.blockSize();
        StripeEncoder core = new StripeEncoder(r.codec(), k, r.r(), b, r.volumeSize(), r.stripe(), r.transferBytes());
        PeerBlocks peer = new PeerBlocks(peers, directory, authorization, Duration.ofSeconds(60));
        Runnable stillPlanned = () -> checkPlanned(peer, volumeId, r.job());
        stillPlanned.run();
        BlockStore blocks = store.blocks();
        AtomicLong read = new AtomicLong();
        AtomicLong sent = new AtomicLong();
        StripeEncoder.VolumeReader src = (off, dst) -> {
            int want = dst.remaining();
            PositionalIo.readFully(file, dst, off);
            read.addAndGet(want);
        };
        BlockStore.Writer[] local = new BlockStore.Writer[n];
        StripeEncoder.BlockUpload[] uploads = new StripeEncoder.BlockUpload[n];
        ExecutorService pool = Executors.newFixedThreadPool(Math.min(UNIT_THREADS, n), task -> {
            Thread t = new Thread(task, "store-encode-" + threads.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        try {
            for (int u = 0; u < n; u++) {
                if (isLocal(r.targets().get(u), holder)) {
                    // a data unit is written front to back (around the page cache); a parity unit by
                    // halves at their offsets, then read back for its CRC
                    local[u] = u < k ? blocks.inOrderWriter(r.targets().get(u).name()) : blocks.writer(r.targets().get(u).name());
                }
            }
            // 1. data units: one read of the volume, each chunk to its block (here, or into the one streamed
            //    PUT of the block on its store: written to the connection as the copy produces it)
            StripeEncoder.DataSink sink = new StripeEncoder.DataSink() {
                @Override
                public void accept(int unit, long off, ByteBuffer chunk) throws IOException {
                    Wire.EncodeTarget t = r.targets().get(unit);
                    if (local[unit] != null) {
                        local[unit].write(chunk, off);
                        localBytes.increment(chunk.limit());
                        return;
                    }
                    if (off == 0) {
                        stillPlanned.run();
                        peerCall(t, () -> uploads[unit] = peer.openBlock(t.address(), t.name(), b));
                    }
                    int len = chunk.remaining();
                    peerCall(t, () -> uploads[unit].write(chunk));
                    sent.addAndGet(len);
                    sentBytes.increment(len);
                }

                @Override
                public void unitDone(int unit, long crc32c) {
                    if (uploads[unit] != null) {
                        Wire.EncodeTarget t = r.targets().get(unit);
                        peerCall(t, () -> uploads[unit].finish(crc32c));
                    }
                }
            };
            StripeEncoder.Data data = core.copyData(src, sink, null, pool);
            betweenPasses.run();
            long[] crcs = new long[n];
            System.arraycopy(data.crc32c(), 0, crcs, 0, k);
            // 2. parity: into its block here, or a temporary block file sent on below
            for (int u = k; u < n; u++) {
                if (local[u] == null) {
                    local[u] = blocks.writer(tempName(r, u));
                }
            }
            core.encodeParity(core.volumeUnits(src), (unit, off, s) -> local[unit].write(s, off));
            // 3. parity units to their stores (or checksummed here), in parallel
            List<Future<Long>> parity = new ArrayList<>();
            for (int u = k; u < n; u++) {
                int unit = u;
                parity.add(pool.submit(() -> {
                    Wire.EncodeTarget t = r.targets().get(unit);
                    FileChannel ch = local[unit].channel();
                    if (isLocal(t, holder)) {
                        long crc = StripeEncoder.copy(ch, b, core.chunkBytes(), c -> { });
                        localBytes.increment(b);
                        return crc;
                    }
                    long[] crc = new long[1];
                    stillPlanned.run();
                    peerCall(t, () -> crc[0] = StripeEncoder.upload(peer, t.address(), t.name(), ch, b, core.chunkBytes()));
                    sent.addAndGet(b);
                    sentBytes.increment(b);
                    return crc[0];
                }));
            }
            for (int u = k; u < n; u++) {
                crcs[u] = await(parity.get(u - k), r);
            }
            // 4. this store's own blocks become durable, with the CRC32C the listing will report
            stillPlanned.run();
            unchanged.run();
            for (int u = 0; u < n; u++) {
                if (isLocal(r.targets().get(u), holder)) {
                    local[u].commit(crcs[u]);
                }
            }
            readBytes.increment(read.get());
            return new Wire.EncodeStripeResult(r.stripe(), crcs, data.candidates(), read.get(), sent.get());
        } finally {
            for (StripeEncoder.BlockUpload u : uploads) {
                if (u != null) {
                    u.close(); // a block not finished is abandoned: its store keeps what it had
                }
            }
            pool.shutdownNow();
            for (BlockStore.Writer w : local) {
                if (w != null) {
                    w.close();
                }
            }
        }
    }

    private static long await(Future<Long> f, Wire.EncodeStripeRequest r) throws IOException {
        try {
            return f.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("stripe " + r.stripe() + ": interrupted", e);
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            if (c instanceof IOException io) {
                throw io;
            }
            if (c instanceof RuntimeException re) {
                throw re;
            }
            throw new IOException("stripe " + r.stripe() + ": " + c, c);
        }
    }

    /**
     * Refuses to go on (409 JOB_NOT_PLANNED) when the directory no longer lists {@code job} as the
     * volume's planned encode: its raid-node crashed and a recovery rolled it back, or it was
     * committed or replaced. So an encode left running by a dead raid-node stops creating blocks
     * at its next block instead of leaving orphans behind the recovery. Not asked without a directory
     * or a job name.
     */
    private void checkPlanned(PeerBlocks peer, long volume, String job) {
        if (directory == null || job == null || job.isEmpty()) {
            return;
        }
        StripeMap m;
        try {
            m = peer.stripeMap((int) volume);
        } catch (IOException e) {
            throw StoreErrors.PEER_FAILED.exception("cannot ask the directory at " + directory + " whether encode job " + job
                    + " of volume " + volume + " is still planned: " + e.getMessage());
        }
        if (m == null || !job.equals(m.job()) || !StripeMap.PLANNED.equals(m.status())) {
            throw StoreErrors.JOB_NOT_PLANNED.exception("encode job " + job + " of volume " + volume + " is not planned in the directory ("
                    + (m == null ? "no stripe map" : "job " + m.job() + " " + m.status()) + "); stopped");
        }
    }

    private static boolean isLocal(Wire.EncodeTarget t, String holder) {
        return holder != null && holder.equals(t.address());
    }

    /** The temporary block file of a parity unit bound for another store (deleted once sent). */
    private static String tempName(Wire.EncodeStripeRequest r, int unit) {
        String name = r.targets().get(unit).name();
        return (name.length() > 100 ? name.substring(0, 100) : name) + ".parity-" + unit + "-outgoing";
    }

    @FunctionalInterface
    private interface PeerCall {
        void run() throws IOException;
    }

    /** A call to a target store: its failure is a 502 PEER_FAILED naming the store and the block. */
    private static void peerCall(Wire.EncodeTarget t, PeerCall call) {
        try {
            call.run();
        } catch (IOException e) {
            throw StoreErrors.PEER_FAILED.exception("sending block " + t.name() + " to store " + t.store() + " at " + t.address()
                    + " failed: " + e.getMessage());
        }
    }

    /**
     * Block writes on other stores through the store's transport, with the caller's admin token (the
     * cluster's admin token opens every store's block endpoints).
     */
    static final class PeerBlocks extends ClusterBlockWrites {
        PeerBlocks(ClusterRpc rpc, String directory, String authorization, Duration timeout) {
            super(directory == null ? List.of() : AddressList.parse("directory", directory), authorization != null && authorization.startsWith("Bearer ") ? authorization.substring(7) : null, timeout, rpc);
        }
    }
}
