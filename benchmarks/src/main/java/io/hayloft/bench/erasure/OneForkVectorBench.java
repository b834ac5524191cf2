package io.hayloft.bench.erasure;

import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * How the erasure-coding JMH benchmarks run, inherited by each (JMH reads these annotations from the
 * superclass): per-thread state, one fork with the Vector API module, 3 warm-up and 5 measured
 * iterations of 1 s. Each benchmark states its own mode and time unit. No state of its own.
 */
@State(Scope.Thread)
@Fork(value = 1, jvmArgsAppend = {"--add-modules=jdk.incubator.vector"})
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public abstract class OneForkVectorBench {
}
