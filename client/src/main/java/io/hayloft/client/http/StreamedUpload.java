package io.hayloft.client.http;

import io.hayloft.client.RemoteException;
import io.hayloft.cold.ClusterRpc;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.core5.function.Supplier;
import org.apache.hc.core5.http.ClassicHttpResponse;
import org.apache.hc.core5.http.ContentType;
import org.apache.hc.core5.http.Header;
import org.apache.hc.core5.http.HttpHost;
import org.apache.hc.core5.http.io.entity.AbstractHttpEntity;
import org.apache.hc.core5.http.io.entity.EntityUtils;
import org.apache.hc.core5.http.message.BasicClassicHttpRequest;
import org.apache.hc.core5.http.message.BasicHeader;

/**
 * A request whose body the caller writes while it produces it ({@link ClusterRpc.StreamedRequest}),
 * on the transport's Apache HttpClient 5 classic engine: the request runs on one of the transport's
 * I/O threads; when the engine asks its entity for the body, the entity hands the connection's
 * output stream to the caller and waits until {@link #finish} (or {@link #close}); the caller's
 * writes go straight to the socket (large writes are not copied by the engine), so the only memory
 * is the caller's own buffer and the socket's, and a slow server slows the writer (TCP backpressure).
 * A body of known length is sent with {@code Content-Length}; otherwise chunked, with the trailers
 * given to {@link #finish}. Never retried: the body cannot be replayed. {@link #close} without a
 * finish makes the entity fail, so the engine drops the connection and the server sees the body cut.
 *
 * <p>Used by one thread at a time (the caller's); the hand-over to the I/O thread is through a future
 * and a latch.
 */
final class StreamedUpload implements ClusterRpc.StreamedRequest {
    /** Where the transport hears how the call went (its listener). */
    interface Report {
        void done(int status, Throwable failure);
    }

    private final String server;
    private final String what;
    private final long length;
    private final Duration connectWait;
    private final Report report;
    private final CompletableFuture<OutputStream> socket = new CompletableFuture<>();
    private final CompletableFuture<ClusterRpc.Answer> answer = new CompletableFuture<>();
    private final CountDownLatch bodyDone = new CountDownLatch(1);
    private volatile boolean abandoned;
    private volatile List<Header> trailers = List.of();
    private OutputStream body;
    private long written;
    private boolean ended;

    private StreamedUpload(String server, String what, long length, Duration connectWait, Report report) {
        this.server = server;
        this.what = what;
        this.length = length;
        this.connectWait = connectWait;
        this.report = report;
    }

    /** Starts the request on {@code threads}; the body goes out as the caller writes it. */
    static StreamedUpload start(CloseableHttpClient client, HttpHost host, String method, String path,
                                Map<String, String> headers, long length, Executor threads, Duration connectWait,
                                String server, String what, Report report) {
        StreamedUpload u = new StreamedUpload(server, what, length, connectWait, report);
        BasicClassicHttpRequest req = new BasicClassicHttpRequest(method, host, path);
        if (headers != null) {
            headers.forEach(req::addHeader);
        }
        req.setEntity(u.new Pipe());
        threads.execute(() -> {
            try (ClassicHttpResponse resp = client.executeOpen(host, req, null)) {
                int status = resp.getCode();
                byte[] b = resp.getEntity() == null ? new byte[0] : EntityUtils.toByteArray(resp.getEntity(), 1 << 20);
                report.done(status, null);
                u.answer.complete(new ClusterRpc.Answer(status, b));
            } catch (Throwable t) {
                report.done(0, t);
                u.answer.completeExceptionally(t);
            } finally {
                u.socket.completeExceptionally(new IOException("the request ended before its body was sent"));
            }
        });
        return u;
    }

    /** The entity: lends the connection's output stream to the caller until the body is done. */
    private final class Pipe extends AbstractHttpEntity {
        Pipe() {
            super(ContentType.APPLICATION_OCTET_STREAM, null, length < 0);
        }

        @Override
        public long getContentLength() {
            return length;
        }

        @Override
        public InputStream getContent() {
            throw new UnsupportedOperationException("a streamed request body is written, not read");
        }

        @Override
        public boolean isStreaming() {
            return true;
        }

        @Override
        public boolean isRepeatable() {
            return false;
        }

        @Override
        public Supplier<List<? extends Header>> getTrailers() {
            return length < 0 ? () -> trailers : null;
        }

        @Override
        public void writeTo(OutputStream out) throws IOException {
            socket.complete(out);
            try {
                bodyDone.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new InterruptedIOException("interrupted while the body of " + what + " was being written");
            }
            if (abandoned) {
                throw new IOException("the body of " + what + " was abandoned by its sender");
            }
        }

        @Override
        public void close() {
        }
    }

    @Override
    public OutputStream body() throws IOException {
        if (body != null) {
            return body;
        }
        OutputStream out;
        try {
            out = socket.get(connectWait.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            close();
            throw new InterruptedIOException(what + " on " + server + ": interrupted while connecting");
        } catch (TimeoutException e) {
            close();
            throw new IOException(what + " on " + server + ": no connection within " + connectWait.toMillis() + " ms");
        } catch (ExecutionException e) {
            close();
            Throwable why = answer.handle((a, t) -> t).getNow(null); // the request's own failure (no connection...)
            throw failed(why != null ? (why.getCause() != null && why instanceof CompletionException
                    ? why.getCause() : why) : answerFailure(e));
        }
        body = new OutputStream() {
            @Override
            public void write(int b) throws IOException {
                write(new byte[] {(byte) b}, 0, 1);
            }

            @Override
            public void write(byte[] b, int off, int len) throws IOException {
                if (ended) {
                    throw new IOException(what + ": the body has ended");
                }
                if (length >= 0 && written + len > length) {
                    throw new IOException(what + ": more than the " + length + " bytes announced");
                }
                try {
                    out.write(b, off, len);
                } catch (IOException e) {
                    close();
                    throw new IOException(what + " on " + server + ": the connection failed after " + written
                            + " bytes of the body (the server may have refused the request and closed it): " + e, e);
                }
                written += len;
            }

            @Override
            public void flush() throws IOException {
                out.flush();
            }

            @Override
            public void close() {
                // the transport ends the body in finish()
            }
        };
        return body;
    }

    @Override
    public ClusterRpc.Answer finish(Map<String, String> trailerFields) throws IOException {
        if (ended) {
            throw new IllegalStateException(what + ": finished already");
        }
        if (length >= 0 && written != length) {
            close();
            throw new IOException(what + " on " + server + ": the body has " + written + " of its " + length + " bytes");
        }
        body(); // a body of 0 bytes: wait for the connection all the same
        ended = true;
        if (trailerFields != null && !trailerFields.isEmpty()) {
            List<Header> t = new ArrayList<>();
            trailerFields.forEach((k, v) -> t.add(new BasicHeader(k, v)));
            trailers = t;
        }
        bodyDone.countDown();
        try {
            return answer.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException(what + " on " + server + ": interrupted while waiting for the answer");
        } catch (ExecutionException e) {
            throw failed(answerFailure(e));
        }
    }

    @Override
    public void close() {
        if (bodyDone.getCount() > 0) {
            abandoned = true;
            ended = true;
            bodyDone.countDown();
        }
    }

    private static Throwable answerFailure(ExecutionException e) {
        return e.getCause() == null ? e : e.getCause();
    }

    private IOException failed(Throwable cause) {
        RemoteException r = HttpTransport.failure(server, what, cause, HttpTransport.TYPED);
        return new IOException(r.getMessage(), r);
    }
}
