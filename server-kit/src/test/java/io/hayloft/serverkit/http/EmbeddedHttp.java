package io.hayloft.serverkit.http;

import io.netty.util.ReferenceCountUtil;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.ReferenceCounted;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * The server's whole pipeline ({@link HttpServer#assemble}) on an {@link EmbeddedChannel}, for the
 * handler tests: bytes fed in one piece or one byte at a time, the blocking executor's tasks run on
 * the test thread (so a request is processed between two reads, as when the executor keeps up),
 * and the bytes written out collected as text. Every buffer fed is remembered, so that a test can
 * check it was released ({@link #assertAllReleased}). Not thread-safe: one test thread.
 */
final class EmbeddedHttp {
    /** How a test's bytes reach the channel. */
    enum Feed { WHOLE, BYTE_BY_BYTE }

    final EmbeddedChannel channel;
    final Tasks executor = new Tasks();
    final AtomicInteger inFlight;
    final LongAdder received = new LongAdder();
    final LongAdder sent = new LongAdder();
    private final List<ByteBuf> fed = new ArrayList<>();
    private final List<ReferenceCounted> tracked = new ArrayList<>();

    EmbeddedHttp(HttpLimits limits, RequestHandler handler) {
        this(limits, handler, null, new AtomicInteger());
    }

    EmbeddedHttp(HttpLimits limits, RequestHandler handler, RequestHandler eventLoopHandler, AtomicInteger inFlight) {
        this(limits, handler, eventLoopHandler, inFlight, ErrorRenderer.JSON);
    }

    /** The pipeline with its own error answers rendered by {@code errors}. */
    EmbeddedHttp(HttpLimits limits, RequestHandler handler, RequestHandler eventLoopHandler, AtomicInteger inFlight,
                 ErrorRenderer errors) {
        this.inFlight = inFlight;
        channel = new EmbeddedChannel();
        channel.freezeTime();
        HttpServer.assemble(channel, null, limits, handler, executor, eventLoopHandler, received, sent, inFlight, errors);
    }

    /** Limits small enough to reach in a test: 64-byte line, 256 bytes of headers, 100-byte body, 4 in flight, 1 s idle. */
    static HttpLimits smallLimits() {
        return new HttpLimits(64, 256, 100, 4, 1000);
    }

    static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.ISO_8859_1);
    }

    /** Feeds {@code bytes} as {@code feed} says, running the executor's tasks after each read, and returns what was written. */
    String exchange(byte[] bytes, Feed feed) {
        int step = feed == Feed.WHOLE ? Math.max(1, bytes.length) : 1;
        for (int i = 0; i < bytes.length && channel.isOpen(); i += step) {
            write(bytes, i, Math.min(step, bytes.length - i));
        }
        return output();
    }

    /**
     * Feeds {@code bytes} to any channel as {@code feed} says, in pooled buffers (tracked by the leak
     * detector), and returns the buffers fed, for the test to check they were released.
     */
    static List<ByteBuf> feed(EmbeddedChannel channel, byte[] bytes, Feed feed) {
        List<ByteBuf> fed = new ArrayList<>();
        int step = feed == Feed.WHOLE ? Math.max(1, bytes.length) : 1;
        for (int i = 0; i < bytes.length && channel.isOpen(); i += step) {
            int n = Math.min(step, bytes.length - i);
            ByteBuf b = ByteBufAllocator.DEFAULT.buffer(n).writeBytes(bytes, i, n);
            fed.add(b);
            channel.writeInbound(b);
        }
        return fed;
    }

    /** Asserts that every buffer in {@code fed} was released. */
    static void assertReleased(List<? extends ReferenceCounted> fed) {
        for (ReferenceCounted b : fed) {
            assertThat(b.refCnt()).as("a buffer is still referenced").isZero();
        }
    }

    /** Feeds {@code bytes} as {@code feed} says and returns what was written (as {@link #exchange}). */
    String exchange(String text, Feed feed) {
        return exchange(ascii(text), feed);
    }

    private void write(byte[] bytes, int from, int n) {
        ByteBuf b = ByteBufAllocator.DEFAULT.buffer(n).writeBytes(bytes, from, n);
        fed.add(b);
        channel.writeInbound(b);
        settle();
    }

    /** Runs executor tasks and the channel's own pending tasks until neither has any left. */
    void settle() {
        do {
            executor.runAll();
            channel.runPendingTasks();
        } while (!executor.isEmpty());
    }

    /** Advances the channel's frozen clock (the idle timeout's) and runs what fell due. */
    void advance(long millis) {
        channel.advanceTimeBy(millis, TimeUnit.MILLISECONDS);
        channel.runScheduledPendingTasks();
        settle();
    }

    /** Everything written out so far, as ISO-8859-1 text; each buffer read is released and checked released. */
    String output() {
        StringBuilder out = new StringBuilder();
        Object o;
        while ((o = channel.readOutbound()) != null) {
            assertThat(o).as("the pipeline writes bytes").isInstanceOf(ByteBuf.class);
            ByteBuf b = (ByteBuf) o;
            out.append(b.toString(StandardCharsets.ISO_8859_1));
            b.release();
            assertThat(b.refCnt()).as("an outbound buffer is held elsewhere").isZero();
        }
        return out.toString();
    }

    /** Remembers a message the handler saw, to check it released at the end. */
    <T extends ReferenceCounted> T track(T msg) {
        tracked.add(msg);
        return msg;
    }

    /**
     * Closes the channel (as the peer going away would) and checks that nothing passed the pipeline's
     * end, nothing more was written, and every buffer fed and every request tracked was released.
     */
    void assertAllReleased() {
        channel.close();
        settle();
        Object in;
        while ((in = channel.readInbound()) != null) {
            ReferenceCountUtil.release(in);
            throw new AssertionError("a message went past the dispatcher: " + in);
        }
        assertThat(channel.finishAndReleaseAll()).as("nothing left outbound").isFalse();
        for (ByteBuf b : fed) {
            assertThat(b.refCnt()).as("a fed buffer is still referenced").isZero();
        }
        for (ReferenceCounted r : tracked) {
            assertThat(r.refCnt()).as("a request the handler saw is still referenced").isZero();
        }
        assertThat(inFlight.get()).as("requests in flight at the end").isZero();
    }

    /** An executor whose tasks run on the test thread, when {@link #runAll} is called; rejects once shut down. */
    static final class Tasks extends AbstractExecutorService {
        private final ArrayDeque<Runnable> queue = new ArrayDeque<>();
        private boolean shutdown;
        int ran;

        @Override
        public void execute(Runnable task) {
            if (shutdown) {
                throw new RejectedExecutionException("shut down");
            }
            queue.add(task);
        }

        void runAll() {
            Runnable r;
            while ((r = queue.poll()) != null) {
                ran++;
                r.run();
            }
        }

        boolean isEmpty() {
            return queue.isEmpty();
        }

        /** Runs the oldest task waiting. */
        void runOne() {
            ran++;
            queue.remove().run();
        }

        int size() {
            return queue.size();
        }

        @Override
        public void shutdown() {
            shutdown = true;
        }

        @Override
        public List<Runnable> shutdownNow() {
            shutdown = true;
            List<Runnable> left = new ArrayList<>(queue);
            queue.clear();
            return left;
        }

        @Override
        public boolean isShutdown() {
            return shutdown;
        }

        @Override
        public boolean isTerminated() {
            return shutdown && queue.isEmpty();
        }

        @Override
        public boolean awaitTermination(long timeout, TimeUnit unit) {
            return isTerminated();
        }
    }
}
