package io.hayloft.raid;

/**
 * Named points of the encode and repair protocols ({@code docs/raid.md}), reported as they are
 * reached. Production uses {@link #NONE}; crash tests stop the raid-node at each one.
 */
@FunctionalInterface
public interface Checkpoints {
    Checkpoints NONE = step -> { };

    void reached(String step);
}
