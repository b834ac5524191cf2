package io.hayloft.serverkit.http;

import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.util.ReferenceCounted;

/**
 * A streamed request's head or a piece of its body, as the {@link StreamRouter} passes it on to the
 * {@link Dispatcher}: not an {@code HttpObject}, so the {@link BoundedAggregator} lets it by.
 * Exactly one of {@link #head} and {@link #content} is set. Reference-counted as the body piece it
 * holds (a head holds no buffer: its count is 1 and releasing it does nothing).
 *
 * <p>Thread-safety: immutable; the piece it holds is released by whoever owns the part, once.
 */
final class StreamPart implements ReferenceCounted {
    /** The request head, or null for a piece of the body. */
    final HttpRequest head;
    /** The piece of the body, or null for a head. */
    final HttpContent content;

    private StreamPart(HttpRequest head, HttpContent content) {
        this.head = head;
        this.content = content;
    }

    /** The part that starts a streamed request. */
    static StreamPart head(HttpRequest head) {
        return new StreamPart(head, null);
    }

    /** A piece of a streamed body: the part owns {@code content}. */
    static StreamPart content(HttpContent content) {
        return new StreamPart(null, content);
    }

    @Override
    public int refCnt() {
        return content == null ? 1 : content.refCnt();
    }

    @Override
    public StreamPart retain() {
        if (content != null) {
            content.retain();
        }
        return this;
    }

    @Override
    public StreamPart retain(int increment) {
        if (content != null) {
            content.retain(increment);
        }
        return this;
    }

    @Override
    public StreamPart touch() {
        return this;
    }

    @Override
    public StreamPart touch(Object hint) {
        if (content != null) {
            content.touch(hint);
        }
        return this;
    }

    @Override
    public boolean release() {
        return content != null && content.release();
    }

    @Override
    public boolean release(int decrement) {
        return content != null && content.release(decrement);
    }
}
