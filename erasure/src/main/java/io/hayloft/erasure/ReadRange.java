package io.hayloft.erasure;

/** A contiguous byte range of one unit that a repair or degraded read will read. */
public record ReadRange(int unit, long offset, long length) {
}
