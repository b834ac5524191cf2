package io.hayloft.bench.failover;

import io.hayloft.client.DirectoryClient;
import io.hayloft.client.DirectoryException;
import io.hayloft.client.Futures;
import io.hayloft.client.NamespaceClient;
import io.hayloft.client.RemoteException;
import io.hayloft.client.http.HttpTransport;
import io.hayloft.format.s3.ObjectRecord;
import io.hayloft.format.s3.Replaced;
import io.hayloft.format.s3.Upload;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * Streams of conditional namespace changes against a directory group, each change recorded with what
 * its client learnt of it, for {@link ConditionalChangesModel} to check the group's final state against.
 * {@code clients} threads, each with its own {@link NamespaceClient} over every replica (so its
 * transport's retries, with one request id per call, ride out a leader's loss), run until
 * {@link #close}: an If-Match chain on the client's own key (version n put with If-Match the ETag
 * of version n-1, If-None-Match: * for the first; after a change of unknown fate or a refusal the
 * client reads the key and goes on from what is there), creates of fresh keys with If-None-Match: *,
 * multipart uploads of fresh keys (a retried create without a request id makes two), and deletes of
 * keys it created, with If-Match. A few puts on the chain key and deletes have If-Match an ETag no
 * object ever had, so some changes are refused and the model can check that none of them shows. Every object has size 0 and no chunk, so no store is needed; keys
 * are unicode, some of them near the 1,024-byte limit.
 *
 * <p>Thread-safe: the streams run on their own threads; {@link #ops} and {@link #reads} may be read
 * at any time, completely once {@link #close} returned.
 */
final class ConditionalChanges implements AutoCloseable {
    /** What a client learnt of a change. */
    enum Outcome {
        /** Answered 200. */
        ACKED,
        /** Answered with a definite refusal: PRECONDITION_FAILED, NO_SUCH_KEY (If-Match on no object), NO_SUCH_UPLOAD. */
        REFUSED,
        /** No answer after the client's own retries (unreachable, timed out, no leader within its deadline). */
        UNKNOWN
    }

    enum Kind {
        /** A version of the client's chain key, If-Match the version before (If-None-Match: * for the first). */
        CHAIN_PUT,
        /** A fresh key, If-None-Match: *. */
        CREATE,
        /** A multipart upload of a fresh key. */
        CREATE_UPLOAD,
        /** A key the client created, If-Match its ETag. */
        DELETE
    }

    /**
     * One change: by whom, what, its outcome; {@code uploadId} of an acknowledged upload; {@code stamp} the
     * leader's time in the answer (an object's {@code modified}, an upload's {@code initiated}; 0 when
     * none); {@code lostAttempts} attempts of the call that ended without an answer; wall-clock times.
     */
    record Op(int client, int seq, Kind kind, String key, String etag, String ifMatch, Outcome outcome, String uploadId,
              long stamp, long lostAttempts, long startMillis, long endMillis, String error) {
    }

    /** What a client read of its chain key after op {@code afterSeq} (its seq): the key's ETag, or null for no object. */
    record Read(int client, int afterSeq, String key, String etag) {
    }

    static final String BUCKET = "kill-bucket";
    /** The refusals: definite answers that the change was not made. */
    private static final Set<String> REFUSALS = Set.of("PRECONDITION_FAILED", "NO_SUCH_KEY", "NO_SUCH_UPLOAD");

    private final List<String> addresses;
    private final List<Stream> streams = new ArrayList<>();
    private final ConcurrentLinkedQueue<Op> ops = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<Read> reads = new ConcurrentLinkedQueue<>();
    /** Answers no change may get (a 400, a 500...): the test's or the directory's bug. */
    private final ConcurrentLinkedQueue<String> unexpected = new ConcurrentLinkedQueue<>();
    private final AtomicLong acked = new AtomicLong();
    private volatile boolean stopping;

    ConditionalChanges(List<String> addresses, int clients, long seed) {
        this.addresses = List.copyOf(addresses);
        for (int c = 0; c < clients; c++) {
            streams.add(new Stream(c, new Random(seed + c)));
        }
    }

    /** A namespace client over every replica: requests time out after 4 s, a call (every replica) after 12 s. */
    static NamespaceClient client(List<String> addresses, HttpTransport.Listener listener) {
        HttpTransport t = HttpTransport.builder().connectTimeout(Duration.ofSeconds(1)).requestTimeout(Duration.ofSeconds(4))
                .listener(listener).build();
        return new NamespaceClient(new DirectoryClient(t, addresses, null));
    }

    void start() {
        streams.forEach(s -> s.thread.start());
    }

    /** Changes acknowledged so far. */
    long acked() {
        return acked.get();
    }

    List<Op> ops() {
        return List.copyOf(ops);
    }

    List<Read> reads() {
        return List.copyOf(reads);
    }

    List<String> unexpected() {
        return List.copyOf(unexpected);
    }

    /** The chain key of client {@code c}: unicode; every other client's is near the 1,024-byte limit. */
    static String chainKey(int c) {
        String k = "chain/c" + c + "/h\u00e4user-\u043a\u043b\u044e\u0447-\u725b-\uD83D\uDC04";
        return c % 2 == 0 ? padded(k) : k;
    }

    /** {@code k} followed by multi-byte characters up to 1,000 to 1,024 UTF-8 bytes. */
    private static String padded(String k) {
        StringBuilder b = new StringBuilder(k).append('/');
        String[] fill = {"\u00e9", "\u20ac", "\uD834\uDD1E", "z"};
        for (int i = 0; bytes(b) < 1000; i++) {
            b.append(fill[i % fill.length]);
        }
        return b.toString();
    }

    private static int bytes(CharSequence s) {
        return s.toString().getBytes(StandardCharsets.UTF_8).length;
    }

    /** Stops the streams (each ends its change in flight) and waits for them. */
    @Override
    public void close() throws InterruptedException {
        stopping = true;
        for (Stream s : streams) {
            s.thread.join(Duration.ofSeconds(60).toMillis());
            if (s.thread.isAlive()) {
                throw new AssertionError("client " + s.client + " did not stop within 60 s");
            }
        }
    }

    /** One client's stream: its thread, its own transport (so the attempts it reports are its calls'), its model state. */
    private final class Stream implements HttpTransport.Listener {
        final int client;
        final Random random;
        final Thread thread;
        final NamespaceClient ns;
        final AtomicLong lost = new AtomicLong();
        final String chainKey;
        /** The chain key's ETag as the client believes it (null: no object); its next version. */
        String current;
        int version = 1;
        int seq;
        /** Keys this client created (acknowledged) and has not tried to delete: key, ETag. */
        final List<String[]> deletable = new ArrayList<>();

        Stream(int client, Random random) {
            this.client = client;
            this.random = random;
            this.ns = client(addresses, this);
            this.chainKey = chainKey(client);
            this.thread = new Thread(this::run, "conditional-changes-" + client);
            this.thread.setDaemon(true);
        }

        @Override
        public void onRequest(String target, String method, int status, RemoteException failure, long nanos) {
            if (status == 0) {
                lost.incrementAndGet(); // an attempt without an answer: the connection broke, refused, or timed out
            }
        }

        private void run() {
            try {
                while (!stopping) {
                    double r = random.nextDouble();
                    if (r < 0.05) {
                        stalePut();
                    } else if (r < 0.4) {
                        chainPut();
                    } else if (r < 0.85 || deletable.isEmpty()) {
                        if (r < 0.65) {
                            create();
                        } else {
                            createUpload();
                        }
                    } else {
                        delete();
                    }
                }
            } catch (RuntimeException | Error e) {
                unexpected.add("client " + client + " stopped: " + e);
            }
        }

        private void chainPut() {
            String etag = "c" + client + "-v" + version++;
            ObjectRecord o = object(chainKey, etag);
            String ifMatch = current;
            Op op = call(Kind.CHAIN_PUT, chainKey, etag, ifMatch,
                    () -> ns.putObject(o, null, new NamespaceClient.Condition(ifMatch, ifMatch == null)));
            if (op.outcome() == Outcome.ACKED) {
                current = etag;
                return;
            }
            // Unknown or refused: what is there now says where the chain goes on.
            while (true) {
                try {
                    current = ns.object(BUCKET, chainKey).get().etag();
                    break;
                } catch (ExecutionException e) {
                    Throwable c = Futures.unwrap(e);
                    if (c instanceof DirectoryException d && "NO_SUCH_KEY".equals(d.errorName())) {
                        current = null;
                        break;
                    }
                    if (stopping) {
                        return; // no read: the chain ends here
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
            reads.add(new Read(client, op.seq(), chainKey, current));
        }

        /**
         * A version of the chain key with If-Match an ETag no object ever had: refused whatever the key holds
         * (PRECONDITION_FAILED, or NO_SUCH_KEY before the first version), so its version must never be visible.
         */
        private void stalePut() {
            String etag = "c" + client + "-v" + version++;
            String ifMatch = "stale-c" + client + "-" + seq;
            Op op = call(Kind.CHAIN_PUT, chainKey, etag, ifMatch,
                    () -> ns.putObject(object(chainKey, etag), null, new NamespaceClient.Condition(ifMatch, false)));
            if (op.outcome() == Outcome.ACKED) {
                unexpected.add("put " + etag + " with If-Match " + ifMatch + ", an ETag no object had, was acknowledged");
            }
        }

        private void create() {
            int n = seq;
            String key = "new/c" + client + "/" + n + "/\u043a\u043b\u044e\u0447 \u00fcber+%/\u725b";
            String k = n % 7 == 3 ? padded(key) : key;
            String etag = "c" + client + "-n" + n;
            Op op = call(Kind.CREATE, k, etag, null,
                    () -> ns.putObject(object(k, etag), null, new NamespaceClient.Condition(null, true)));
            if (op.outcome() == Outcome.ACKED) {
                deletable.add(new String[] {k, etag});
            }
        }

        private void createUpload() {
            int n = seq;
            String key = "up/c" + client + "/" + n + "/\u30a2\u30c3\u30d7\u30ed\u30fc\u30c9 \uD83D\uDCE6";
            String k = n % 5 == 2 ? padded(key) : key;
            call(Kind.CREATE_UPLOAD, k, null, null,
                    () -> ns.createUpload(new Upload(BUCKET, k, null, 0, "application/octet-stream", null, Map.of("n", "" + n), null, null)));
        }

        private void delete() {
            String[] ke = deletable.remove(random.nextInt(deletable.size()));
            // One delete in four has If-Match an ETag the object never had: refused, the object stays.
            String ifMatch = random.nextInt(4) == 0 ? "stale-c" + client + "-" + seq : ke[1];
            Op op = call(Kind.DELETE, ke[0], ke[1], ifMatch, () -> ns.deleteObject(BUCKET, ke[0], ifMatch));
            if (!ifMatch.equals(ke[1]) && op.outcome() == Outcome.ACKED) {
                unexpected.add("delete of '" + ke[0] + "' with If-Match " + ifMatch + ", an ETag it never had, was acknowledged");
            }
        }

        private ObjectRecord object(String key, String etag) {
            return new ObjectRecord(BUCKET, key, 0, etag, List.of(), List.of(), Map.of(), null, "text/plain", Map.of(),
                    Map.of("client", "" + client), 0);
        }

        /** Makes one change and records it with its outcome. */
        private Op call(Kind kind, String key, String etag, String ifMatch, Supplier<CompletableFuture<?>> change) {
            long lostBefore = lost.get();
            long start = System.currentTimeMillis();
            Outcome outcome;
            String uploadId = null;
            long stamp = 0;
            String error = null;
            try {
                Object answer = change.get().get();
                outcome = Outcome.ACKED;
                if (answer instanceof Replaced r && r.object() != null && kind != Kind.DELETE) {
                    stamp = r.object().modified();
                    if (!etag.equals(r.object().etag()) || !key.equals(r.object().key())) {
                        unexpected.add(kind + " " + etag + " answered with the object of another change: " + r.object());
                    }
                } else if (answer instanceof Upload u) {
                    uploadId = u.uploadId();
                    stamp = u.initiated();
                    if (!key.equals(u.key())) {
                        unexpected.add("upload of '" + key + "' answered with another upload: " + u);
                    }
                }
                acked.incrementAndGet();
            } catch (ExecutionException e) {
                Throwable c = Futures.unwrap(e);
                error = String.valueOf(c.getMessage());
                error = error.length() > 200 ? error.substring(0, 200) + "..." : error; // the message may hold a 1 KB key
                if (c instanceof RemoteException r && r.kind() == RemoteException.Kind.ERROR && REFUSALS.contains(r.errorName())) {
                    outcome = Outcome.REFUSED;
                } else {
                    outcome = Outcome.UNKNOWN;
                    if (c instanceof RemoteException r && r.kind() == RemoteException.Kind.ERROR && r.httpStatus() < 500
                            && r.httpStatus() != 421) {
                        unexpected.add(kind + " of '" + key + "' answered " + r.httpStatus() + " " + r.errorName() + ": " + error);
                    } else if (!(c instanceof RemoteException)) {
                        unexpected.add(kind + " of '" + key + "' failed: " + c);
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                outcome = Outcome.UNKNOWN;
                error = "interrupted";
            }
            Op op = new Op(client, seq++, kind, key, etag, ifMatch, outcome, uploadId, stamp, lost.get() - lostBefore, start,
                    System.currentTimeMillis(), error);
            ops.add(op);
            return op;
        }
    }
}
