package io.hayloft.store.http;

import io.hayloft.client.RemoteException;
import io.hayloft.client.http.HttpTransport;
import io.hayloft.format.errors.ApiError;
import io.hayloft.format.errors.ApiException;
import io.hayloft.format.errors.CommonErrors;
import io.hayloft.format.errors.StoreErrors;
import io.hayloft.format.needle.Needle;
import io.hayloft.format.wire.BatchBody;
import io.hayloft.format.wire.VolumeIndex;
import io.hayloft.serverkit.http.HttpResponses;
import io.hayloft.serverkit.http.RouteParams;
import io.hayloft.serverkit.http.Router;
import io.hayloft.serverkit.http.StreamedRequestHandler;
import io.hayloft.serverkit.http.StreamedResponse;
import io.hayloft.serverkit.metrics.PrometheusEndpoint;
import io.hayloft.store.Store;
import io.hayloft.store.StoreOperationException;
import io.hayloft.store.WriteAuthorizer;
import io.hayloft.store.block.BlockStore;
import io.hayloft.store.volume.Compactor;
import io.hayloft.store.volume.Volume;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Timer;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import java.io.EOFException;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
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

    private final Router router;
    private final ConcurrentHashMap<String, Timer> timers = new ConcurrentHashMap<>();
    private final Store store;
    private final WriteAuthorizer authorizer;
    private final PrometheusEndpoint metrics;
    private final VolumePuller puller;
    private final HttpTransport peers;
    private final StripeEncodeEndpoint encoder;
    private final long maxBlockBytes;

    public StoreHttpHandler(Store store, WriteAuthorizer authorizer, PrometheusEndpoint metrics) {
        this(store, authorizer, metrics, HttpTransport.builder().build());
    }

    /** @param peers the store's transport for its calls to other stores (volume pulls, stripe encodes) */
    public StoreHttpHandler(Store store, WriteAuthorizer authorizer, PrometheusEndpoint metrics,
                            HttpTransport peers) {
        this(store, authorizer, metrics, peers, true, null);
    }

    /**
     * @param encodeStripes whether {@code POST /admin/volumes/{id}/encode-stripe} is served (false: 404, as an older store)
     * @param directory     the directory's host:port (or its replicas', comma-separated), asked whether a stripe's
     *                      encode job is still planned; null: not asked
     */
    public StoreHttpHandler(Store store, WriteAuthorizer authorizer, PrometheusEndpoint metrics,
                            HttpTransport peers, boolean encodeStripes, String directory) {
        this(store, authorizer, metrics, peers, encodeStripes, directory, DEFAULT_MAX_BLOCK_BYTES);
    }

    /** The default of the store's {@code maxBlockBytes}: the longest streamed block put. */
    public static final long DEFAULT_MAX_BLOCK_BYTES = 4L << 30;

    /** @param maxBlockBytes the longest block a streamed {@code PUT /blocks/<name>} may write; longer: 413 */
    public StoreHttpHandler(Store store, WriteAuthorizer authorizer, PrometheusEndpoint metrics,
                            HttpTransport peers, boolean encodeStripes, String directory,
                            long maxBlockBytes) {
        if (maxBlockBytes < 0) {
            throw new IllegalArgumentException("maxBlockBytes must be >= 0, got " + maxBlockBytes);
        }
        this.maxBlockBytes = maxBlockBytes;
        this.puller = new VolumePuller(peers);
        this.peers = peers;
        this.encoder = new StripeEncodeEndpoint(store, peers, metrics.registry(), directory);
        this.store = store;
        this.authorizer = authorizer;
        this.metrics = metrics;
        this.router = routes(encodeStripes);
        for (boolean direct : new boolean[] {true, false}) {
            FunctionCounter.builder("hayloft_store_block_committed_bytes", store.blocks(),
                            b -> b.committedBytes(direct))
                    .description("bytes of blocks written by a streamed put or a stripe encode and committed, by how they were "
                            + "written: direct (around the page cache) or page_cache")
                    .tag("writes", direct ? "direct" : "page_cache").register(metrics.registry());
        }
    }

    /**
     * The store's routes (docs/store-api.md). Needle and key paths start with a volume number
     * ({@code {volume:digits}}), so {@code /admin/...}, {@code /blocks/...} and {@code /volumes/...}
     * are never taken for one.
     */
    private Router routes(boolean encodeStripes) {
        Router.Builder b = Router.builder(StoreErrors.BAD_ARGUMENT)
                .route("needle", "GET HEAD PUT DELETE /{volume:digits}/{key}/{alt}", (req, p) -> {
                    long vol = p.number("volume");
                    syncGate(req.method(), vol);
                    return noticeReadOnly(vol, () -> needle(req, req.method(), vol, p));
                })
                .route("batch", "POST /{volume:digits}/batch", (req, p) -> {
                    long vol = p.number("volume");
                    return noticeReadOnly(vol, () -> batch(req, vol));
                })
                .route("key", "GET HEAD DELETE /{volume:digits}/{key}", (req, p) -> {
                    long vol = p.number("volume");
                    syncGate(req.method(), vol);
                    return key(req, req.method(), vol, p);
                })
                .route("admin.volumes", "GET /admin/volumes", (req, p) -> HttpResponses.json(HttpResponseStatus.OK, Map.of("volumes",
                        store.volumes().stream().map(Volume::status).sorted((x, y) -> Long.compare(x.id(), y.id())).toList())))
                .route("admin.volume", "GET POST DELETE /admin/volumes/{volume}", this::adminVolume)
                .route("admin.seal", "POST /admin/volumes/{volume}/seal", (req, p) -> {
                    long vol = p.number("volume");
                    authorizer.authorize(req, "admin.seal", vol);
                    Volume v = store.volume(vol);
                    v.seal();
                    store.volumeReadOnly(vol);
                    return HttpResponses.json(HttpResponseStatus.OK, v.status());
                })
                .route("admin.index", "GET /admin/volumes/{volume}/index", (req, p) -> {
                    long vol = p.number("volume");
                    Volume v = store.volume(vol);
                    byte[] block = VolumeIndex.of((int) vol, v.indexListing()).encode();
                    return HttpResponses.bytes(HttpResponseStatus.OK, Unpooled.wrappedBuffer(block), OCTETS);
                })
                .route("admin.pull", "POST /admin/volumes/{volume}/pull", (req, p) -> {
                    long vol = p.number("volume");
                    authorizer.authorize(req, "admin.pull", vol);
                    String from = p.query("from");
                    return HttpResponses.json(HttpResponseStatus.CREATED, puller.pull(store, vol, from == null ? "" : from));
                })
                .route("admin.compact", "POST /admin/volumes/{volume}/compact", (req, p) -> {
                    long vol = p.number("volume");
                    authorizer.authorize(req, "admin.compact", vol);
                    Compactor.Result res = Compactor.compact(store.volume(vol));
                    return HttpResponses.json(HttpResponseStatus.OK, res);
                })
                .route("blocks", "GET /blocks", (req, p) -> HttpResponses.json(HttpResponseStatus.OK, Map.of("blocks", store.blocks().list())))
                .route("block", "GET POST DELETE /blocks/{name}", this::block)
                .streamed("block.put", "PUT /blocks/{name}", this::openBlockPut)
                .route("raw", "GET /volumes/{volume}/raw", (req, p) -> {
                    Volume v = store.volume(p.number("volume"));
                    long offset = number(param(p, "offset"), "offset");
                    long length = number(param(p, "length"), "length");
                    if (length > STREAM_THRESHOLD) {
                        // streamed from the file a chunk at a time; the range holds the file open through a compaction
                        Volume.RawRange range = v.openRaw(offset, length);
                        return StreamedResponse.fileRange(HttpResponseStatus.OK, range.channel(), range.offset(), range.length(),
                                OCTETS, range);
                    }
                    return HttpResponses.bytes(HttpResponseStatus.OK, Unpooled.wrappedBuffer(v.readRaw(offset, (int) length)), OCTETS);
                })
                .route("health", "GET /health", (req, p) -> HttpResponses.json(HttpResponseStatus.OK,
                        Map.of("status", "ok", "volumes", store.volumes().size())))
                .route("metrics", "GET /metrics", (req, p) -> metrics.response())
                .translate(e -> e instanceof StoreOperationException se ? new ApiException(errorOf(se.reason()), se.getMessage()) : null)
                .observe((route, m, status, nanos) -> timer(route, m, status).record(nanos, TimeUnit.NANOSECONDS));
        if (encodeStripes) {
            b.route("admin.encode-stripe", "POST /admin/volumes/{volume}/encode-stripe", (req, p) -> {
                long vol = p.number("volume");
                authorizer.authorize(req, "admin.encode", vol);
                return encoder.handle(req, vol);
            });
        }
        return b.build();
    }

    /** The store's routes, as documented in docs/store-api.md. */
    public Router router() {
        return router;
    }

    @Override
    public FullHttpResponse handle(FullHttpRequest req) throws Exception {
        return router.handle(req);
    }

    /** The router's answer as a future, so that an asynchronous route holds no executor thread. */
    @Override
    public CompletableFuture<FullHttpResponse> handleAsync(FullHttpRequest req) {
        return router.handleAsync(req);
    }

    /** {@code PUT /blocks/<name>} is streamed; everything else is aggregated. */
    @Override
    public boolean streamsBody(HttpRequest head) {
        return ((StreamedRequestHandler) router).streamsBody(head);
    }

    @Override
    public RequestBody openBody(HttpRequest head) throws Exception {
        return ((StreamedRequestHandler) router).openBody(head);
    }

    /**
     * Starts a streamed {@code PUT /blocks/<name>}: checks the name (400), the admin token (as the
     * other block writes), the declared {@code Content-Length} against {@code maxBlockBytes} (413) and
     * the {@value #CRC_HEADER} header (400), then opens the block's {@link BlockStore.Writer}.
     */
    private RequestBody openBlockPut(HttpRequest head, RouteParams p) {
        try {
            String name = BlockStore.checkName(p.string("name"));
            authorizer.authorize(head, "block.put", -1);
            long declared = HttpUtil.getContentLength(head, -1L);
            if (declared > maxBlockBytes) {
                throw CommonErrors.BODY_TOO_LARGE.exception("block " + name + " of " + declared
                        + " bytes is longer than the store's maxBlockBytes (" + maxBlockBytes + " bytes)");
            }
            Long expected = StreamedBlockPut.parseCrc(head.headers().get(CRC_HEADER), "header");
            StreamedBlockPut put = new StreamedBlockPut(store.blocks().inOrderWriter(name), maxBlockBytes, expected);
            return new RequestBody() {
                @Override
                public void content(ByteBuf chunk) throws Exception {
                    put.content(chunk);
                }

                @Override
                public FullHttpResponse end(HttpHeaders trailers) throws Exception {
                    return put.end(trailers);
                }

                @Override
                public void abort() {
                    put.abort();
                }
            };
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** {@code crc} as 8 lower-case hex digits (what {@code %08x} prints, without a Formatter per read). */
    static String hex8(int crc) {
        String h = Integer.toHexString(crc);
        return h.length() == 8 ? h : "00000000".substring(h.length()) + h;
    }

    /**
     * The request timer of a (route, method, status): {@code hayloft_store_requests{op,route,status}},
     * registered once, then looked up in a map (building and registering a Micrometer timer per
     * request cost a tenth of a small read's CPU). {@code op} is as it always was: {@code needle.get},
     * {@code key.delete}, {@code block.put}, {@code batch}, {@code admin}, ..., {@code other} for a
     * request no route took.
     */
    private Timer timer(Router.Route route, HttpMethod m, int status) {
        String name = route == null ? "none" : route.name();
        String key = name + ' ' + m.name() + ' ' + status;
        Timer t = timers.get(key);
        if (t == null) {
            t = timers.computeIfAbsent(key, k -> Timer.builder("hayloft_store_requests").tag("op", op(name, m))
                    .tag("route", name).tag("status", Integer.toString(status))
                    .serviceLevelObjectives(PrometheusEndpoint.LATENCY_BUCKETS).register(metrics.registry()));
        }
        return t;
    }

    /** The {@code op} tag of a route's requests. */
    private static String op(String route, HttpMethod m) {
        String method = m.name().toLowerCase(Locale.ROOT);
        return switch (route) {
            case "needle", "key" -> route + "." + method;
            case "blocks", "block", "block.put" -> "block." + method;
            case "none" -> "other";
            default -> route.startsWith("admin.") ? "admin" : route;
        };
    }

    private FullHttpResponse needle(FullHttpRequest req, HttpMethod m, long vol, RouteParams p) throws Exception {
        long key = p.unsigned64("key");
        int alt = p.unsigned32("alt");
        long cookie = cookie(param(p, "cookie"));
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
        // DELETE (the route takes no other method)
        authorizer.authorize(req, "needle.delete", vol);
        v.delete(key, alt, cookie);
        return HttpResponses.empty(HttpResponseStatus.NO_CONTENT);
    }

    /** A request that may meet a volume turning read-only. */
    @FunctionalInterface
    private interface Call {
        FullHttpResponse run() throws Exception;
    }

    /** Runs a write; a VOLUME_READ_ONLY answer tells the store (which heartbeats at once), then goes out as usual. */
    private FullHttpResponse noticeReadOnly(long volume, Call call) throws Exception {
        try {
            return call.run();
        } catch (StoreOperationException e) {
            if (e.reason() == StoreOperationException.Reason.VOLUME_READ_ONLY) {
                store.volumeReadOnly(volume);
            }
            throw e;
        }
    }

    /** Reads of a volume that has not applied the delete log since the store started answer 503 VOLUME_SYNCING. */
    private void syncGate(HttpMethod m, long volume) {
        if (m.equals(HttpMethod.GET) || m.equals(HttpMethod.HEAD)) {
            store.checkSynced(volume);
        }
    }

    /**
     * {@code GET|HEAD /<vol>/<key>?cookie=C}: the live alternate keys of a key with that cookie;
     * {@code DELETE}: deletes them all. None: 404 NEEDLE_NOT_FOUND, as for a missing needle.
     */
    private FullHttpResponse key(FullHttpRequest req, HttpMethod m, long vol, RouteParams p) throws Exception {
        long key = p.unsigned64("key");
        long cookie = cookie(param(p, "cookie"));
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

    private FullHttpResponse batch(FullHttpRequest req, long vol) throws Exception {
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

    /** {@code GET|POST|DELETE /admin/volumes/<id>}: a volume's status, its creation, its removal. */
    private FullHttpResponse adminVolume(FullHttpRequest req, RouteParams p) throws Exception {
        long vol = p.number("volume");
        if (req.method().equals(HttpMethod.POST)) {
            authorizer.authorize(req, "admin.create", vol);
            return HttpResponses.json(HttpResponseStatus.CREATED, store.create(vol).status());
        }
        if (req.method().equals(HttpMethod.DELETE)) {
            authorizer.authorize(req, "admin.drop", vol);
            store.drop(vol);
            return HttpResponses.empty(HttpResponseStatus.NO_CONTENT);
        }
        return HttpResponses.json(HttpResponseStatus.OK, store.volume(vol).status());
    }

    /** {@code GET|POST|DELETE /blocks/<name>}; {@code PUT} is streamed ({@link #openBlockPut}). */
    private FullHttpResponse block(FullHttpRequest req, RouteParams p) throws Exception {
        BlockStore bs = store.blocks();
        HttpMethod m = req.method();
        Map<String, List<String>> params = p.queryParameters();
        String name = BlockStore.checkName(p.string("name"));
        if (m.equals(HttpMethod.GET)) {
            long offset = params.containsKey("offset") ? number(param(p, "offset"), "offset") : 0;
            long length = params.containsKey("length") ? number(param(p, "length"), "length") : -1;
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
                        throw new EOFException("block " + name + " ended before " + range.length() + " bytes");
                    }
                }
                return HttpResponses.bytes(HttpResponseStatus.OK, content, OCTETS);
            } finally {
                range.close();
            }
        }
        // PUT /blocks/<name> never gets here: it is a streamed route (StreamedBlockPut)
        if (m.equals(HttpMethod.POST)) {
            String opName = param(p, "op");
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
                return pullBlock(bs, name, p);
            }
            throw new ApiException(StoreErrors.BAD_ARGUMENT, "op must be 'create', 'append' or 'pull', got '" + opName + "'");
        }
        // DELETE (the route takes no other method)
        authorizer.authorize(req, "block.delete", -1);
        bs.delete(name);
        return HttpResponses.empty(HttpResponseStatus.NO_CONTENT);
    }

    /**
     * {@code POST /blocks/<name>?op=pull&from=HOST:PORT&source=NAME&length=N}: this store copies
     * block {@code source} of the store at {@code from} (its first {@code length} bytes, the whole
     * block) into block {@code name} with one streamed {@code GET /blocks/<source>}, written
     * {@link BlockStore#putStream a chunk at a time} and atomically (a copy left by an earlier attempt
     * is replaced); answers its length and CRC32C. The drain moves blocks with it: their bytes never
     * pass through the raid-node (docs/store-api.md).
     */
    private FullHttpResponse pullBlock(BlockStore bs, String name, RouteParams params) throws Exception {
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
                InputStream in;
                try {
                    in = peers.openStream(from, "GET " + path, path, null, HttpTransport.TYPED);
                } catch (RemoteException e) {
                    if (e.httpStatus() == 404) {
                        throw new StoreOperationException(StoreOperationException.Reason.BLOCK_NOT_FOUND, "pull: block " + source + " on "
                                + from + ": " + e.getMessage());
                    }
                    throw new SourceFailure("GET " + path + " on " + from + ": " + e.getMessage(), e);
                }
                return new FilterInputStream(in) {
                    @Override
                    public int read(byte[] b, int off, int len) throws IOException {
                        try {
                            return super.read(b, off, len);
                        } catch (IOException e) {
                            throw new SourceFailure("reading block " + source + " from " + from + ": " + e, e);
                        }
                    }
                };
            });
        } catch (SourceFailure | EOFException e) {
            throw new ApiException(StoreErrors.PULL_SOURCE_FAILED, "pull of block " + source + " from " + from
                    + " failed; block " + name + " left as it was: " + e.getMessage());
        }
        return HttpResponses.json(HttpResponseStatus.CREATED, Map.of("block", name, "length", info.length(),
                "crc32c", info.crc32c()));
    }

    /** A failure of the source store of a block pull (not of this store's disk). */
    private static final class SourceFailure extends IOException {
        SourceFailure(String message, Throwable cause) {
            super(message, cause);
        }
    }

    static long number(String s, String what) {
        if (s == null || s.isEmpty() || s.length() > 19 || !s.chars().allMatch(c -> c >= '0' && c <= '9')) {
            throw new ApiException(StoreErrors.BAD_ARGUMENT, what + " must be a non-negative decimal number, got '" + s + "'");
        }
        try {
            return Long.parseLong(s);
        } catch (NumberFormatException e) {
            throw new ApiException(StoreErrors.BAD_ARGUMENT, what + " must be at most " + Long.MAX_VALUE + ", got '" + s + "'");
        }
    }

    private static long cookie(String s) {
        if (s == null || s.isEmpty() || s.length() > 16 || !s.chars().allMatch(c -> Character.digit(c, 16) >= 0)) {
            throw new ApiException(StoreErrors.BAD_ARGUMENT, "cookie must be 1..16 hex digits, got '" + s + "'");
        }
        return Long.parseUnsignedLong(s, 16);
    }

    private static String param(RouteParams params, String name) {
        String v = params.query(name);
        if (v == null) {
            throw new ApiException(StoreErrors.BAD_ARGUMENT, "missing query parameter '" + name + "'");
        }
        return v;
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
