package io.hayloft.store.http;

import io.hayloft.format.errors.StoreErrors;
import io.hayloft.format.errors.ApiError;
import io.hayloft.format.errors.ApiException;
import io.hayloft.format.errors.CommonErrors;
import io.hayloft.serverkit.http.HttpResponses;
import io.hayloft.serverkit.http.StreamedRequestHandler;
import io.hayloft.serverkit.http.StreamedResponse;
import io.hayloft.serverkit.metrics.PrometheusEndpoint;
import io.hayloft.format.wire.BatchBody;
import io.hayloft.format.wire.VolumeIndex;
import io.hayloft.store.Store;
import io.hayloft.store.StoreOperationException;
import io.hayloft.store.WriteAuthorizer;
import io.hayloft.store.block.BlockStore;
import io.hayloft.store.volume.Compactor;
import io.hayloft.format.needle.Needle;
import io.hayloft.store.volume.Volume;
import io.micrometer.core.instrument.Timer;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.QueryStringDecoder;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Routes the store's HTTP API (docs/store-api.md) to the {@link Store}. Runs on the disk
 * executor (see {@link io.hayloft.serverkit.http.HttpServer}), so it calls the volumes directly.
 * {@code PUT /blocks/<name>} is the one request whose body is streamed, not aggregated: written
 * to the block's file as it arrives ({@link StreamedBlockPut}), so a block of any size up to
 * {@code maxBlockBytes} goes in one request without being held in memory.
 *
 * <p>Thread-safe (stateless apart from thread-safe collaborators).
 */
public final class StoreHttpHandler implements StreamedRequestHandler {
    private static final String OCTETS = "application/octet-stream";
    /** Response header of a needle GET: CRC32C of the data as 8 lower-case hex digits. */
    public static final String CRC_HEADER = "X-Hayloft-Crc32c";
    /** Response header of a needle GET: {@code writable} or {@code read-only}, the volume's state on this store. */
    public static final String VOLUME_STATE_HEADER = "X-Hayloft-Volume-State";
    /** Block and raw volume reads longer than this are streamed from the file, not read into memory. */
    static final long STREAM_THRESHOLD = 1 << 20;

    private final java.util.concurrent.ConcurrentHashMap<String, Timer> timers = new java.util.concurrent.ConcurrentHashMap<>();
    private final Store store;
    private final WriteAuthorizer authorizer;
    private final PrometheusEndpoint metrics;
    private final VolumePuller puller;
    private final io.hayloft.client.http.HttpTransport peers;
    private final StripeEncodeEndpoint encoder;
    private final boolean encodeStripes;
    private final long maxBlockBytes;

    public StoreHttpHandler(Store store, WriteAuthorizer authorizer, PrometheusEndpoint metrics) {
        this(store, authorizer, metrics, io.hayloft.client.http.HttpTransport.builder().build());
    }

    /** @param peers the store's transport for its calls to other stores (volume pulls, stripe encodes) */
    public StoreHttpHandler(Store store, WriteAuthorizer authorizer, PrometheusEndpoint metrics,
                            io.hayloft.client.http.HttpTransport peers) {
        this(store, authorizer, metrics, peers, true, null);
    }

    /**
     * @param encodeStripes whether {@code POST /admin/volumes/{id}/encode-stripe} is served (false: 404, as an older store)
     * @param directory     the directory's host:port, asked whether a stripe's encode job is still planned; null: not asked
     */
    public StoreHttpHandler(Store store, WriteAuthorizer authorizer, PrometheusEndpoint metrics,
                            io.hayloft.client.http.HttpTransport peers, boolean encodeStripes, String directory) {
        this(store, authorizer, metrics, peers, encodeStripes, directory, DEFAULT_MAX_BLOCK_BYTES);
    }

    /** The default of the store's {@code maxBlockBytes}: the longest streamed block put. */
    public static final long DEFAULT_MAX_BLOCK_BYTES = 4L << 30;

    /** @param maxBlockBytes the longest block a streamed {@code PUT /blocks/<name>} may write; longer: 413 */
    public StoreHttpHandler(Store store, WriteAuthorizer authorizer, PrometheusEndpoint metrics,
                            io.hayloft.client.http.HttpTransport peers, boolean encodeStripes, String directory,
                            long maxBlockBytes) {
        if (maxBlockBytes < 0) {
            throw new IllegalArgumentException("maxBlockBytes must be >= 0, got " + maxBlockBytes);
        }
        this.maxBlockBytes = maxBlockBytes;
        this.encodeStripes = encodeStripes;
        this.puller = new VolumePuller(peers);
        this.peers = peers;
        this.encoder = new StripeEncodeEndpoint(store, peers, metrics.registry(), directory);
        this.store = store;
        this.authorizer = authorizer;
        this.metrics = metrics;
        for (boolean direct : new boolean[] {true, false}) {
            io.micrometer.core.instrument.FunctionCounter.builder("hayloft_store_block_committed_bytes", store.blocks(),
                            b -> b.committedBytes(direct))
                    .description("bytes of blocks written by a streamed put or a stripe encode and committed, by how they were "
                            + "written: direct (around the page cache) or page_cache")
                    .tag("writes", direct ? "direct" : "page_cache").register(metrics.registry());
        }
    }

    @Override
    public FullHttpResponse handle(FullHttpRequest req) throws Exception {
        long t0 = System.nanoTime();
        String op = "other";
        FullHttpResponse r;
        try {
            QueryStringDecoder q = new QueryStringDecoder(req.uri());
            String[] parts = q.path().split("/");
            List<String> seg = java.util.Arrays.stream(parts).filter(s -> !s.isEmpty()).toList();
            Map<String, List<String>> params = q.parameters();
            HttpMethod m = req.method();
            if (seg.size() == 3 && isNumber(seg.get(0))) {
                op = "needle." + m.name().toLowerCase(java.util.Locale.ROOT);
                syncGate(m, seg.get(0));
                r = noticeReadOnly(seg.get(0), () -> needle(req, m, seg, params));
            } else if (seg.size() == 2 && "batch".equals(seg.get(1)) && isNumber(seg.get(0))) {
                op = "batch";
                r = noticeReadOnly(seg.get(0), () -> batch(req, m, seg));
            } else if (seg.size() == 2 && isNumber(seg.get(0))) {
                op = "key." + m.name().toLowerCase(java.util.Locale.ROOT);
                syncGate(m, seg.get(0));
                r = key(req, m, seg, params);
            } else if (!seg.isEmpty() && "admin".equals(seg.get(0))) {
                op = "admin";
                r = admin(req, m, seg);
            } else if (!seg.isEmpty() && "blocks".equals(seg.get(0))) {
                op = "block." + m.name().toLowerCase(java.util.Locale.ROOT);
                r = blocks(req, m, seg, params);
            } else if (seg.size() == 3 && "volumes".equals(seg.get(0)) && "raw".equals(seg.get(2))) {
                op = "raw";
                allow(m, HttpMethod.GET);
                Volume v = store.volume(number(seg.get(1), "volume"));
                long offset = number(param(params, "offset"), "offset");
                long length = number(param(params, "length"), "length");
                if (length > STREAM_THRESHOLD) {
                    // streamed from the file a chunk at a time; the range holds the file open through a compaction
                    Volume.RawRange range = v.openRaw(offset, length);
                    r = StreamedResponse.fileRange(HttpResponseStatus.OK, range.channel(), range.offset(), range.length(),
                            OCTETS, range);
                } else {
                    r = HttpResponses.bytes(HttpResponseStatus.OK, Unpooled.wrappedBuffer(v.readRaw(offset, (int) length)), OCTETS);
                }
            } else if (seg.size() == 1 && "health".equals(seg.get(0))) {
                op = "health";
                allow(m, HttpMethod.GET);
                r = HttpResponses.json(HttpResponseStatus.OK, Map.of("status", "ok", "volumes", store.volumes().size()));
            } else if (seg.size() == 1 && "metrics".equals(seg.get(0))) {
                op = "metrics";
                allow(m, HttpMethod.GET);
                r = metrics.response();
            } else {
                throw new ApiException(CommonErrors.NOT_FOUND, "no such endpoint: " + q.path());
            }
        } catch (StoreOperationException e) {
            r = HttpResponses.error(errorOf(e.reason()), e.getMessage());
        } catch (ApiException e) {
            r = HttpResponses.error(e);
        }
        timer(op, r.status().code()).record(System.nanoTime() - t0, TimeUnit.NANOSECONDS);
        return r;
    }

    /** {@code PUT /blocks/<name>} (two path segments) is streamed; everything else is aggregated. */
    @Override
    public boolean streamsBody(io.netty.handler.codec.http.HttpRequest head) {
        if (!HttpMethod.PUT.equals(head.method())) {
            return false;
        }
        String path = new QueryStringDecoder(head.uri()).path();
        if (!path.startsWith("/blocks/")) {
            return false;
        }
        List<String> seg = java.util.Arrays.stream(path.split("/")).filter(p -> !p.isEmpty()).toList();
        return seg.size() == 2 && "blocks".equals(seg.get(0));
    }

    /**
     * Starts a streamed {@code PUT /blocks/<name>}: checks the name (400), the admin token (as the
     * other block writes), the declared {@code Content-Length} against {@code maxBlockBytes} (413) and
     * the {@value #CRC_HEADER} header (400), then opens the block's {@link BlockStore.Writer}.
     */
    @Override
    public RequestBody openBody(io.netty.handler.codec.http.HttpRequest head) {
        long t0 = System.nanoTime();
        try {
            List<String> seg = java.util.Arrays.stream(new QueryStringDecoder(head.uri()).path().split("/"))
                    .filter(p -> !p.isEmpty()).toList();
            String name = BlockStore.checkName(seg.get(1));
            authorizer.authorize(head, "block.put", -1);
            long declared = io.netty.handler.codec.http.HttpUtil.getContentLength(head, -1L);
            if (declared > maxBlockBytes) {
                throw CommonErrors.BODY_TOO_LARGE.exception("block " + name + " of " + declared
                        + " bytes is longer than the store's maxBlockBytes (" + maxBlockBytes + " bytes)");
            }
            Long expected = StreamedBlockPut.parseCrc(head.headers().get(CRC_HEADER), "header");
            StreamedBlockPut put = new StreamedBlockPut(store.blocks().inOrderWriter(name), maxBlockBytes, expected);
            return new RequestBody() {
                @Override
                public void content(ByteBuf chunk) throws Exception {
                    try {
                        put.content(chunk);
                    } catch (ApiException e) {
                        timer("block.put", e.error().status()).record(System.nanoTime() - t0, TimeUnit.NANOSECONDS);
                        throw e;
                    }
                }

                @Override
                public FullHttpResponse end(io.netty.handler.codec.http.HttpHeaders trailers) throws Exception {
                    try {
                        FullHttpResponse r = put.end(trailers);
                        timer("block.put", r.status().code()).record(System.nanoTime() - t0, TimeUnit.NANOSECONDS);
                        return r;
                    } catch (ApiException e) {
                        timer("block.put", e.error().status()).record(System.nanoTime() - t0, TimeUnit.NANOSECONDS);
                        throw e;
                    } catch (StoreOperationException e) {
                        throw new ApiException(errorOf(e.reason()), e.getMessage());
                    }
                }

                @Override
                public void abort() {
                    put.abort();
                }
            };
        } catch (StoreOperationException e) {
            timer("block.put", errorOf(e.reason()).status()).record(System.nanoTime() - t0, TimeUnit.NANOSECONDS);
            throw new ApiException(errorOf(e.reason()), e.getMessage());
        } catch (ApiException e) {
            timer("block.put", e.error().status()).record(System.nanoTime() - t0, TimeUnit.NANOSECONDS);
            throw e;
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** {@code crc} as 8 lower-case hex digits (what {@code %08x} prints, without a Formatter per read). */
    static String hex8(int crc) {
        String h = Integer.toHexString(crc);
        return h.length() == 8 ? h : "00000000".substring(h.length()) + h;
    }

    /**
     * The request timer of an (op, status): registered once, then looked up in a map (building and
     * registering a Micrometer timer per request cost a tenth of a small read's CPU).
     */
    private Timer timer(String op, int status) {
        String key = op + ' ' + status;
        Timer t = timers.get(key);
        if (t == null) {
            t = timers.computeIfAbsent(key, k -> Timer.builder("hayloft_store_requests").tag("op", op)
                    .tag("status", Integer.toString(status)).serviceLevelObjectives(PrometheusEndpoint.LATENCY_BUCKETS)
                    .register(metrics.registry()));
        }
        return t;
    }

    private FullHttpResponse needle(FullHttpRequest req, HttpMethod m, List<String> seg,
                                    Map<String, List<String>> params) throws Exception {
        long vol = number(seg.get(0), "volume");
        long key = unsigned64(seg.get(1), "key");
        int alt = (int) parseUnsigned32(seg.get(2));
        long cookie = cookie(param(params, "cookie"));
        Volume v = store.volume(vol);
        if (m.equals(HttpMethod.GET) || m.equals(HttpMethod.HEAD)) {
            // the needle is read straight into a pooled direct buffer that the response then owns
            ByteBuf[] holder = new ByteBuf[1];
            try {
                Volume.NeedleRead read = v.readChecked(key, alt, cookie, n -> {
                    if (holder[0] != null) {
                        holder[0].release(); // the read started over (a compaction swapped the file)
                        holder[0] = null;
                    }
                    holder[0] = ByteBufAllocator.DEFAULT.directBuffer(n, n);
                    return holder[0].nioBuffer(0, n);
                });
                ByteBuffer data = read.data();
                if (m.equals(HttpMethod.HEAD)) {
                    FullHttpResponse r = HttpResponses.empty(HttpResponseStatus.OK);
                    r.headers().set(HttpHeaderNames.CONTENT_TYPE, OCTETS);
                    r.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, data.remaining());
                    return r;
                }
                ByteBuf content = holder[0].setIndex(Needle.HEADER_SIZE, Needle.HEADER_SIZE + data.remaining());
                // CRC32C of the data and the volume's writability, for caches that verify and admit (docs/cache-api.md);
                // the CRC is the one the read computed while checking the needle, not a second pass.
                holder[0] = null; // handed to the response
                FullHttpResponse r = HttpResponses.bytes(HttpResponseStatus.OK, content, OCTETS);
                r.headers().set(CRC_HEADER, hex8(read.dataCrc32c()));
                r.headers().set(VOLUME_STATE_HEADER, v.readOnly() ? "read-only" : "writable");
                return r;
            } finally {
                if (holder[0] != null) {
                    holder[0].release();
                }
            }
        }
        if (m.equals(HttpMethod.PUT)) {
            authorizer.authorize(req, "needle.put", vol);
            int n = req.content().readableBytes();
            v.write(key, alt, cookie, req.content().nioBuffer());
            return HttpResponses.json(HttpResponseStatus.CREATED,
                    Map.of("volume", vol, "key", Long.toUnsignedString(key), "alt", Integer.toUnsignedString(alt), "size", n));
        }
        if (m.equals(HttpMethod.DELETE)) {
            authorizer.authorize(req, "needle.delete", vol);
            v.delete(key, alt, cookie);
            return HttpResponses.empty(HttpResponseStatus.NO_CONTENT);
        }
        throw methodNotAllowed(m, "GET, HEAD, PUT, DELETE");
    }

    /** A request that may meet a volume turning read-only. */
    @FunctionalInterface
    private interface Call {
        FullHttpResponse run() throws Exception;
    }

    /** Runs a write; a VOLUME_READ_ONLY answer tells the store (which heartbeats at once), then goes out as usual. */
    private FullHttpResponse noticeReadOnly(String volume, Call call) throws Exception {
        try {
            return call.run();
        } catch (StoreOperationException e) {
            if (e.reason() == StoreOperationException.Reason.VOLUME_READ_ONLY) {
                store.volumeReadOnly(number(volume, "volume"));
            }
            throw e;
        }
    }

    /** Reads of a volume that has not applied the delete log since the store started answer 503 VOLUME_SYNCING. */
    private void syncGate(HttpMethod m, String volume) {
        if (m.equals(HttpMethod.GET) || m.equals(HttpMethod.HEAD)) {
            store.checkSynced(number(volume, "volume"));
        }
    }

    /**
     * {@code GET|HEAD /<vol>/<key>?cookie=C}: the live alternate keys of a key with that cookie;
     * {@code DELETE}: deletes them all. None: 404 NEEDLE_NOT_FOUND, as for a missing needle.
     */
    private FullHttpResponse key(FullHttpRequest req, HttpMethod m, List<String> seg,
                                 Map<String, List<String>> params) throws Exception {
        long vol = number(seg.get(0), "volume");
        long key = unsigned64(seg.get(1), "key");
        if (!m.equals(HttpMethod.GET) && !m.equals(HttpMethod.HEAD) && !m.equals(HttpMethod.DELETE)) {
            throw methodNotAllowed(m, "GET, HEAD, DELETE");
        }
        long cookie = cookie(param(params, "cookie"));
        Volume v = store.volume(vol);
        if (m.equals(HttpMethod.DELETE)) {
            authorizer.authorize(req, "needle.delete", vol);
            List<Integer> deleted = v.deleteKey(key, cookie);
            if (deleted.isEmpty()) {
                throw keyNotFound(vol, key);
            }
            return HttpResponses.json(HttpResponseStatus.OK,
                    Map.of("deleted", deleted.stream().map(Integer::toUnsignedLong).toList()));
        }
        List<Volume.LiveAlt> alts = v.liveAlts(key, cookie);
        if (alts.isEmpty()) {
            throw keyNotFound(vol, key);
        }
        if (m.equals(HttpMethod.HEAD)) {
            return HttpResponses.empty(HttpResponseStatus.OK);
        }
        List<Map<String, Object>> out = alts.stream()
                .<Map<String, Object>>map(a -> Map.of("alt", Integer.toUnsignedLong(a.alt()), "size", a.size())).toList();
        return HttpResponses.json(HttpResponseStatus.OK,
                Map.of("volume", vol, "key", Long.toUnsignedString(key), "alts", out));
    }

    /** The same answer for a missing key and a wrong cookie. */
    private static StoreOperationException keyNotFound(long vol, long key) {
        return new StoreOperationException(StoreOperationException.Reason.NEEDLE_NOT_FOUND,
                "needle " + vol + "/" + Long.toUnsignedString(key) + " not found");
    }

    private FullHttpResponse batch(FullHttpRequest req, HttpMethod m, List<String> seg) throws Exception {
        allow(m, HttpMethod.POST);
        long vol = number(seg.get(0), "volume");
        Volume v = store.volume(vol);
        authorizer.authorize(req, "batch", vol);
        List<Volume.NeedleWrite> needles;
        try {
            needles = BatchBody.parse(req.content().nioBuffer(), Needle.MAX_DATA_SIZE,
                    (key, cookie, alt, data) -> new Volume.NeedleWrite(key, alt, cookie, ByteBuffer.wrap(data)));
        } catch (BatchBody.MalformedBatchException e) {
            throw new ApiException(StoreErrors.BAD_ARGUMENT, e.getMessage());
        }
        for (Volume.NeedleWrite w : needles) {
            authorizer.authorizeKey(req, "batch", vol, w.key());
        }
        v.write(needles);
        return HttpResponses.json(HttpResponseStatus.CREATED,
                Map.of("volume", vol, "written", needles.size(), "bytes", req.content().readableBytes()));
    }

    private FullHttpResponse admin(FullHttpRequest req, HttpMethod m, List<String> seg) throws Exception {
        if (seg.size() < 2 || !"volumes".equals(seg.get(1))) {
            throw new ApiException(CommonErrors.NOT_FOUND, "no such endpoint: /" + String.join("/", seg));
        }
        if (seg.size() == 2) {
            allow(m, HttpMethod.GET);
            return HttpResponses.json(HttpResponseStatus.OK, Map.of("volumes",
                    store.volumes().stream().map(Volume::status).sorted((a, b) -> Long.compare(a.id(), b.id())).toList()));
        }
        long vol = number(seg.get(2), "volume");
        if (seg.size() == 3) {
            if (m.equals(HttpMethod.POST)) {
                authorizer.authorize(req, "admin.create", vol);
                return HttpResponses.json(HttpResponseStatus.CREATED, store.create(vol).status());
            }
            if (m.equals(HttpMethod.DELETE)) {
                authorizer.authorize(req, "admin.drop", vol);
                store.drop(vol);
                return HttpResponses.empty(HttpResponseStatus.NO_CONTENT);
            }
            allow(m, HttpMethod.GET);
            return HttpResponses.json(HttpResponseStatus.OK, store.volume(vol).status());
        }
        if (seg.size() == 4 && "seal".equals(seg.get(3))) {
            allow(m, HttpMethod.POST);
            authorizer.authorize(req, "admin.seal", vol);
            Volume v = store.volume(vol);
            v.seal();
            store.volumeReadOnly(vol);
            return HttpResponses.json(HttpResponseStatus.OK, v.status());
        }
        if (seg.size() == 4 && "index".equals(seg.get(3))) {
            allow(m, HttpMethod.GET);
            Volume v = store.volume(vol);
            byte[] block = VolumeIndex.of((int) vol, v.indexListing()).encode();
            return HttpResponses.bytes(HttpResponseStatus.OK, Unpooled.wrappedBuffer(block), OCTETS);
        }
        if (seg.size() == 4 && "pull".equals(seg.get(3))) {
            allow(m, HttpMethod.POST);
            authorizer.authorize(req, "admin.pull", vol);
            String from = new QueryStringDecoder(req.uri()).parameters().getOrDefault("from", List.of("")).get(0);
            return HttpResponses.json(HttpResponseStatus.CREATED, puller.pull(store, vol, from));
        }
        if (seg.size() == 4 && "encode-stripe".equals(seg.get(3)) && encodeStripes) {
            allow(m, HttpMethod.POST);
            authorizer.authorize(req, "admin.encode", vol);
            return encoder.handle(req, vol);
        }
        if (seg.size() == 4 && "compact".equals(seg.get(3))) {
            allow(m, HttpMethod.POST);
            authorizer.authorize(req, "admin.compact", vol);
            Compactor.Result res = Compactor.compact(store.volume(vol));
            return HttpResponses.json(HttpResponseStatus.OK, res);
        }
        throw new ApiException(CommonErrors.NOT_FOUND, "no such endpoint: /" + String.join("/", seg));
    }

    private FullHttpResponse blocks(FullHttpRequest req, HttpMethod m, List<String> seg,
                                    Map<String, List<String>> params) throws Exception {
        BlockStore bs = store.blocks();
        if (seg.size() == 1) {
            allow(m, HttpMethod.GET);
            return HttpResponses.json(HttpResponseStatus.OK, Map.of("blocks", bs.list()));
        }
        if (seg.size() != 2) {
            throw new ApiException(CommonErrors.NOT_FOUND, "no such endpoint: /" + String.join("/", seg));
        }
        String name = BlockStore.checkName(seg.get(1));
        if (m.equals(HttpMethod.GET)) {
            long offset = params.containsKey("offset") ? number(param(params, "offset"), "offset") : 0;
            long length = params.containsKey("length") ? number(param(params, "length"), "length") : -1;
            BlockStore.OpenRange range = bs.open(name, offset, length);
            if (range.length() > STREAM_THRESHOLD) {
                // streamed from the open file a chunk at a time; the response closes it
                return StreamedResponse.fileRange(HttpResponseStatus.OK, range.channel(), range.offset(), range.length(),
                        OCTETS, range);
            }
            try {
                ByteBuf content = Unpooled.buffer((int) range.length());
                while (content.readableBytes() < range.length()) {
                    int got = content.readableBytes();
                    if (content.writeBytes(range.channel(), range.offset() + got, (int) range.length() - got) < 0) {
                        content.release();
                        throw new java.io.EOFException("block " + name + " ended before " + range.length() + " bytes");
                    }
                }
                return HttpResponses.bytes(HttpResponseStatus.OK, content, OCTETS);
            } finally {
                range.close();
            }
        }
        // PUT /blocks/<name> never gets here: streamsBody hands it to openBody (StreamedBlockPut)
        if (m.equals(HttpMethod.POST)) {
            String opName = param(params, "op");
            if ("create".equals(opName)) {
                authorizer.authorize(req, "block.create", -1);
                bs.create(name);
                return HttpResponses.json(HttpResponseStatus.CREATED, Map.of("block", name, "length", 0));
            }
            if ("append".equals(opName)) {
                authorizer.authorize(req, "block.append", -1);
                long len = bs.append(name, req.content().nioBuffer());
                return HttpResponses.json(HttpResponseStatus.OK, Map.of("block", name, "length", len));
            }
            if ("pull".equals(opName)) {
                authorizer.authorize(req, "block.put", -1);
                return pullBlock(bs, name, params);
            }
            throw new ApiException(StoreErrors.BAD_ARGUMENT, "op must be 'create', 'append' or 'pull', got '" + opName + "'");
        }
        if (m.equals(HttpMethod.DELETE)) {
            authorizer.authorize(req, "block.delete", -1);
            bs.delete(name);
            return HttpResponses.empty(HttpResponseStatus.NO_CONTENT);
        }
        throw methodNotAllowed(m, "GET, PUT, POST, DELETE");
    }

    /**
     * {@code POST /blocks/<name>?op=pull&from=HOST:PORT&source=NAME&length=N}: this store copies
     * block {@code source} of the store at {@code from} (its first {@code length} bytes, the whole
     * block) into block {@code name} with one streamed {@code GET /blocks/<source>}, written
     * {@link BlockStore#putStream a chunk at a time} and atomically (a copy left by an earlier attempt
     * is replaced); answers its length and CRC32C. The drain moves blocks with it: their bytes never
     * pass through the raid-node (docs/store-api.md).
     */
    private FullHttpResponse pullBlock(BlockStore bs, String name, Map<String, List<String>> params) throws Exception {
        String from = param(params, "from");
        if (from == null || !from.matches("[A-Za-z0-9.\\-\\[\\]:]+:[0-9]{1,5}")) {
            throw new ApiException(StoreErrors.BAD_ARGUMENT, "from must be the source store's host:port, got '" + from + "'");
        }
        String source = BlockStore.checkName(param(params, "source"));
        long length = number(param(params, "length"), "length");
        String path = "/blocks/" + source + "?offset=0&length=" + length;
        BlockStore.BlockInfo info;
        try {
            info = bs.putStream(name, length, () -> {
                java.io.InputStream in;
                try {
                    in = peers.openStream(from, "GET " + path, path, null, io.hayloft.client.http.HttpTransport.TYPED);
                } catch (io.hayloft.client.RemoteException e) {
                    if (e.httpStatus() == 404) {
                        throw new StoreOperationException(StoreOperationException.Reason.BLOCK_NOT_FOUND, "pull: block " + source + " on "
                                + from + ": " + e.getMessage());
                    }
                    throw new SourceFailure("GET " + path + " on " + from + ": " + e.getMessage(), e);
                }
                return new java.io.FilterInputStream(in) {
                    @Override
                    public int read(byte[] b, int off, int len) throws java.io.IOException {
                        try {
                            return super.read(b, off, len);
                        } catch (java.io.IOException e) {
                            throw new SourceFailure("reading block " + source + " from " + from + ": " + e, e);
                        }
                    }
                };
            });
        } catch (SourceFailure | java.io.EOFException e) {
            throw new ApiException(StoreErrors.PULL_SOURCE_FAILED, "pull of block " + source + " from " + from
                    + " failed; block " + name + " left as it was: " + e.getMessage());
        }
        return HttpResponses.json(HttpResponseStatus.CREATED, Map.of("block", name, "length", info.length(),
                "crc32c", info.crc32c()));
    }

    /** A failure of the source store of a block pull (not of this store's disk). */
    private static final class SourceFailure extends java.io.IOException {
        SourceFailure(String message, Throwable cause) {
            super(message, cause);
        }
    }

    private static void allow(HttpMethod m, HttpMethod allowed) {
        if (!m.equals(allowed)) {
            throw methodNotAllowed(m, allowed.name());
        }
    }

    private static ApiException methodNotAllowed(HttpMethod m, String allowed) {
        return new ApiException(CommonErrors.METHOD_NOT_ALLOWED, "method " + m + " not allowed here; use " + allowed);
    }

    private static boolean isNumber(String s) {
        return !s.isEmpty() && s.length() <= 19 && s.chars().allMatch(Character::isDigit);
    }

    private static String checkDigits(String s, String what) {
        if (s.isEmpty() || s.length() > 20 || !s.chars().allMatch(Character::isDigit)) {
            throw new ApiException(StoreErrors.BAD_ARGUMENT, what + " must be an unsigned decimal number, got '" + s + "'");
        }
        return s;
    }

    static long number(String s, String what) {
        if (s == null || !isNumber(s)) {
            throw new ApiException(StoreErrors.BAD_ARGUMENT, what + " must be a non-negative decimal number, got '" + s + "'");
        }
        try {
            return Long.parseLong(s);
        } catch (NumberFormatException e) {
            throw new ApiException(StoreErrors.BAD_ARGUMENT, what + " must be at most " + Long.MAX_VALUE + ", got '" + s + "'");
        }
    }

    /** An unsigned 64-bit decimal (a photo key). */
    static long unsigned64(String s, String what) {
        checkDigits(s, what);
        try {
            return Long.parseUnsignedLong(s);
        } catch (NumberFormatException e) {
            throw new ApiException(StoreErrors.BAD_ARGUMENT, what + " must be an unsigned 64-bit number, got '" + s + "'");
        }
    }

    private static long parseUnsigned32(String s) {
        checkDigits(s, "alt");
        long v = s.length() > 10 ? -1 : Long.parseLong(s);
        if (v < 0 || v > 0xFFFFFFFFL) {
            throw new ApiException(StoreErrors.BAD_ARGUMENT, "alt must be an unsigned 32-bit number, got '" + s + "'");
        }
        return v;
    }

    private static long cookie(String s) {
        if (s == null || s.isEmpty() || s.length() > 16 || !s.chars().allMatch(c -> Character.digit(c, 16) >= 0)) {
            throw new ApiException(StoreErrors.BAD_ARGUMENT, "cookie must be 1..16 hex digits, got '" + s + "'");
        }
        return Long.parseUnsignedLong(s, 16);
    }

    private static String param(Map<String, List<String>> params, String name) {
        List<String> v = params.get(name);
        if (v == null || v.isEmpty()) {
            throw new ApiException(StoreErrors.BAD_ARGUMENT, "missing query parameter '" + name + "'");
        }
        return v.get(0);
    }

    /** The wire error a store failure is sent as. */
    private static ApiError errorOf(StoreOperationException.Reason reason) {
        return switch (reason) {
            case NEEDLE_NOT_FOUND -> StoreErrors.NEEDLE_NOT_FOUND;
            case VOLUME_NOT_FOUND -> StoreErrors.VOLUME_NOT_FOUND;
            case VOLUME_READ_ONLY -> StoreErrors.VOLUME_READ_ONLY;
            case VOLUME_EXISTS -> StoreErrors.VOLUME_EXISTS;
            case NEEDLE_CORRUPT -> StoreErrors.NEEDLE_CORRUPT;
            case NEEDLE_TOO_LARGE -> StoreErrors.NEEDLE_TOO_LARGE;
            case BAD_ARGUMENT -> StoreErrors.BAD_ARGUMENT;
            case COMPACTION_RUNNING -> StoreErrors.COMPACTION_RUNNING;
            case BLOCK_NOT_FOUND -> StoreErrors.BLOCK_NOT_FOUND;
            case BLOCK_EXISTS -> StoreErrors.BLOCK_EXISTS;
            case BAD_RANGE -> StoreErrors.BAD_RANGE;
            case UNSUPPORTED_FORMAT -> StoreErrors.UNSUPPORTED_FORMAT;
            case CORRUPT_FILE -> StoreErrors.CORRUPT_FILE;
            case VOLUME_SYNCING -> StoreErrors.VOLUME_SYNCING;
        };
    }
}
