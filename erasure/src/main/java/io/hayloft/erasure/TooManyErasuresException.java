package io.hayloft.erasure;

import java.util.Arrays;

/** More units of a stripe are missing than the code can rebuild. */
public final class TooManyErasuresException extends IllegalStateException {

    private static final long serialVersionUID = 1L;

    private final int[] missing;
    private final int tolerated;

    public TooManyErasuresException(int[] missing, int totalUnits, int tolerated) {
        super(missing.length + " of " + totalUnits + " units are missing (" + Arrays.toString(missing)
                + "); at most " + tolerated + " can be rebuilt");
        this.missing = missing.clone();
        this.tolerated = tolerated;
    }

    /** The unavailable units, ascending. */
    public int[] missing() {
        return missing.clone();
    }

    /** How many losses the code tolerates (r). */
    public int tolerated() {
        return tolerated;
    }
}
