package io.hayloft.client;

import io.hayloft.format.wire.PhotoId;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * A put or delete that reached some replicas of a logical volume but not all of them, after the
 * client's bounded retries. It says exactly which replicas failed and why ({@link #failures()}),
 * which acknowledged ({@link #succeeded()}), and which photos were concerned ({@link #ids()}).
 *
 * <p>For a put, the photos were not acknowledged: the needles on the replicas that took them are
 * not meant to be read (the client does not return their ids). {@link #retry()} writes the same keys
 * and cookies again to the replicas that failed (overwriting is idempotent on a store); it needs the
 * lease's write token to be still valid. A put that was coalesced with others into one combined
 * write ({@link HayloftClient.Builder#coalescePuts(int)}) gets a failure of its own, naming only its
 * photos, whose retry writes only them. For a delete, the directory has marked
 * the photos deleted (they are no longer readable) and {@link #retry()} deletes the needles left on
 * the failed replicas.
 *
 * <p>Immutable, hence thread-safe; the retry handle is not serialised.
 */
public class PartialFailureException extends HayloftException {
    private static final long serialVersionUID = 1L;

    private final String operation;
    private final int volume;
    private final transient List<PhotoId> ids;
    private final transient Map<String, RemoteException> failures;
    private final transient List<String> succeeded;
    private final transient Supplier<CompletableFuture<List<PhotoId>>> retry;

    public PartialFailureException(String operation, int volume, List<PhotoId> ids, Map<String, RemoteException> failures,
                                   List<String> succeeded, Supplier<CompletableFuture<List<PhotoId>>> retry) {
        super(message(operation, volume, ids, failures, succeeded));
        this.operation = operation;
        this.volume = volume;
        this.ids = List.copyOf(ids);
        this.failures = Map.copyOf(failures);
        this.succeeded = List.copyOf(succeeded);
        this.retry = retry;
        failures.values().forEach(this::addSuppressed);
    }

    private static String message(String operation, int volume, List<PhotoId> ids, Map<String, RemoteException> failures,
                                  List<String> succeeded) {
        StringBuilder b = new StringBuilder();
        b.append(operation).append(" of ").append(ids.size()).append(ids.size() == 1 ? " photo" : " photos")
                .append(" on volume ").append(volume).append(" failed on ").append(failures.size()).append(" of ")
                .append(failures.size() + succeeded.size()).append(" replicas: ");
        failures.entrySet().stream().sorted(Map.Entry.comparingByKey()).forEach(e -> b.append(e.getKey()).append(" (")
                .append(e.getValue().kind()).append(": ").append(e.getValue().getMessage()).append("); "));
        b.append("acknowledged by ").append(succeeded.isEmpty() ? "none" : String.join(", ", succeeded));
        if (ids.size() <= 4) {
            b.append("; ids ").append(ids);
        } else {
            b.append("; ids ").append(ids.get(0)).append(" .. ").append(ids.get(ids.size() - 1));
        }
        return b.toString();
    }

    /** {@code "put"} or {@code "delete"}. */
    public String operation() {
        return operation;
    }

    public int volume() {
        return volume;
    }

    public List<PhotoId> ids() {
        return ids;
    }

    /** Replica address → why it failed (the last attempt's error). */
    public Map<String, RemoteException> failures() {
        return failures;
    }

    /** Replicas that acknowledged. */
    public List<String> succeeded() {
        return succeeded;
    }

    /** Repeats the operation on the failed replicas only. */
    public CompletableFuture<List<PhotoId>> retry() {
        if (retry == null) {
            return CompletableFuture.failedFuture(new HayloftException("this failure cannot be retried (deserialised)"));
        }
        return retry.get();
    }
}
