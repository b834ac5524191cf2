package io.hayloft.format.directory;

/**
 * A logical volume's place in its life cycle (docs/directory-api.md, docs/raid.md): as the directory
 * stores it ({@link VolumeInfo#state()}) and answers it ({@code GET /v1/volumes},
 * {@code GET /v1/volume-map}); serialised as the constant's name. Callers ask the predicates below
 * instead of comparing names.
 *
 * <pre>
 * WRITABLE -> READ_ONLY -> ENCODING -> ERASURE_CODED (-> DEGRADED -> REPAIRING -> ERASURE_CODED)
 *                 ^------------'  (rollback)
 * </pre>
 *
 * A state added later is a new API version: within {@code v1} the set is closed. Immutable.
 */
public enum VolumeState {
    /** Takes new photos: leases are handed out on it. */
    WRITABLE,
    /** Sealed (full, its store failed, or an operator said so): read from its replicas; the raid-node may encode it. */
    READ_ONLY,
    /** The raid-node is writing its stripes; still read from its replicas. */
    ENCODING,
    /** Stored as stripes (committed stripe map); replicas dropped or about to be. */
    ERASURE_CODED,
    /** Coded, with blocks lost: read by decoding. */
    DEGRADED,
    /** Coded, with lost blocks being rebuilt. */
    REPAIRING;

    /** Takes new photos ({@code WRITABLE}). */
    public boolean writable() {
        return this == WRITABLE;
    }

    /** Sealed and still replicated, not (being) coded ({@code READ_ONLY}): what the raid-node encodes, drains and seals. */
    public boolean readOnly() {
        return this == READ_ONLY;
    }

    /**
     * Held as replicas, whole volume files on stores ({@code WRITABLE}, {@code READ_ONLY}): the
     * stores list its photos and their alternate keys.
     */
    public boolean hot() {
        return this == WRITABLE || this == READ_ONLY;
    }

    /**
     * Its data is written, or being written, as stripes ({@code ENCODING} or {@link #coded()}):
     * deletes from this point on leave dead bytes in the stripes (the reclaim hint counts them).
     */
    public boolean cold() {
        return this == ENCODING || coded();
    }

    /**
     * Its stripe map is committed ({@code ERASURE_CODED}, {@code DEGRADED}, {@code REPAIRING}): read
     * through the stripes, never from replicas; what a reclaim may rewrite.
     */
    public boolean coded() {
        return this == ERASURE_CODED || this == DEGRADED || this == REPAIRING;
    }
}
