package io.hayloft.bench.failover;

import io.hayloft.bench.failover.ConditionalChanges.Kind;
import io.hayloft.bench.failover.ConditionalChanges.Op;
import io.hayloft.bench.failover.ConditionalChanges.Outcome;
import io.hayloft.bench.failover.ConditionalChanges.Read;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The model {@link ConditionalChanges}' history is checked against: no change acknowledged and then
 * lost, none applied twice, no refused change visible, conditions held. Every key has one writer (its
 * client) and every ETag names one change, so what a key holds says which change put it there:
 *
 * <ul>
 * <li>A chain key (versions put with If-Match the version before) holds, at every read the client made
 *     and at the end, the version of its last acknowledged put or of a later put of unknown fate (one
 *     acknowledged after it had its If-Match on a newer version: an older one can no longer apply);
 *     never the version of a refused put (a retry of an applied put that is refused, the symptom of a
 *     change applied twice, would leave its version visible), nothing before the first put was
 *     acknowledged.</li>
 * <li>A fresh key created with If-None-Match: * holds its object when the create was acknowledged and
 *     no delete of it was acknowledged or unknown; nothing when the delete was acknowledged, or the
 *     create refused (only a create of its own could have made the key exist); either when unknown. A
 *     refused delete left the object there.</li>
 * <li>A fresh key of an acknowledged multipart upload has exactly that upload; of an unknown one at
 *     most one; no key has two.</li>
 * <li>No object or upload the history does not explain.</li>
 * </ul>
 *
 * <p>Stateless, thread-safe.
 */
final class ConditionalChangesModel {
    private ConditionalChangesModel() {
    }

    /**
     * The violations of the history in {@code ops} and {@code reads} against the final state: {@code objects}
     * (key to ETag) and {@code uploads} (key to its upload ids).
     */
    static List<String> check(List<Op> ops, List<Read> reads, Map<String, String> objects, Map<String, List<String>> uploads) {
        List<String> problems = new ArrayList<>();
        Map<String, List<Op>> byKey = new HashMap<>();
        for (Op op : ops.stream().sorted(Comparator.comparingInt(Op::client).thenComparingInt(Op::seq)).toList()) {
            byKey.computeIfAbsent(op.key(), k -> new ArrayList<>()).add(op);
        }
        for (Map.Entry<String, List<Op>> e : byKey.entrySet()) {
            List<Op> history = e.getValue();
            switch (history.get(0).kind()) {
                case CHAIN_PUT -> checkChain(e.getKey(), history, reads, objects.get(e.getKey()), problems);
                case CREATE -> checkCreated(e.getKey(), history, objects.get(e.getKey()), problems);
                case CREATE_UPLOAD -> checkUpload(e.getKey(), history.get(0), uploads.getOrDefault(e.getKey(), List.of()), problems);
                default -> problems.add("'" + brief(e.getKey()) + "': a " + history.get(0).kind() + " before any create");
            }
        }
        for (Map.Entry<String, String> o : objects.entrySet()) {
            List<Op> h = byKey.get(o.getKey());
            if (h == null || h.get(0).kind() == Kind.CREATE_UPLOAD) {
                problems.add("object '" + brief(o.getKey()) + "' (ETag " + o.getValue() + ") that no change made");
            }
        }
        for (Map.Entry<String, List<String>> u : uploads.entrySet()) {
            List<Op> h = byKey.get(u.getKey());
            if (h == null || h.get(0).kind() != Kind.CREATE_UPLOAD) {
                problems.add("uploads " + u.getValue() + " of '" + brief(u.getKey()) + "' that no change made");
            }
        }
        return problems;
    }

    /** A chain's reads and its final ETag: the last acknowledged version or a later unknown one, never a refused one. */
    private static void checkChain(String key, List<Op> history, List<Read> reads, String last, List<String> problems) {
        int client = history.get(0).client();
        for (Read r : reads) {
            if (r.client() == client && r.key().equals(key)) {
                String why = explained(history, r.afterSeq(), r.etag());
                if (why != null) {
                    problems.add("chain of client " + client + ": read after change " + r.afterSeq() + " found " + r.etag() + ": " + why);
                }
            }
        }
        String why = explained(history, Integer.MAX_VALUE, last);
        if (why != null) {
            problems.add("chain of client " + client + " ends with " + last + ": " + why);
        }
    }

    /**
     * Null when {@code etag} (null: no object) is what the chain may hold after its changes up to seq
     * {@code upTo}; else why not.
     */
    private static String explained(List<Op> history, int upTo, String etag) {
        Op lastAcked = null;
        List<String> possible = new ArrayList<>();
        for (Op op : history) {
            if (op.seq() > upTo) {
                break;
            }
            if (op.outcome() == Outcome.ACKED) {
                lastAcked = op;
                possible.clear();
                possible.add(op.etag());
            } else if (op.outcome() == Outcome.UNKNOWN) {
                possible.add(op.etag());
            }
        }
        if (lastAcked == null && etag == null) {
            return null;
        }
        if (etag != null && possible.contains(etag)) {
            return null;
        }
        Op named = history.stream().filter(o -> Objects.equals(o.etag(), etag)).findFirst().orElse(null);
        if (named != null && named.outcome() == Outcome.REFUSED) {
            return "the version of a put that was refused (" + named.error() + ") is visible: a change applied twice";
        }
        return "expected " + (lastAcked == null ? "nothing" : "the acknowledged " + lastAcked.etag()) + (possible.size() > 1
                ? " or a later put of unknown fate " + possible.subList(1, possible.size()) : "") + (named == null ? "" : " (it is "
                + named.outcome() + " change " + named.seq() + ")");
    }

    /** A key created with If-None-Match: * and perhaps deleted with If-Match. */
    private static void checkCreated(String key, List<Op> history, String last, List<String> problems) {
        Op create = history.get(0);
        Op delete = history.size() > 1 ? history.get(1) : null;
        String what = "key '" + brief(key) + "' of client " + create.client();
        if (last != null && !last.equals(create.etag())) {
            problems.add(what + " holds ETag " + last + ", created as " + create.etag());
            return;
        }
        boolean present = last != null;
        switch (create.outcome()) {
            case REFUSED -> {
                if (present) {
                    problems.add(what + ": the create was refused (" + create.error() + "), yet the object is there: a change applied twice");
                }
            }
            case UNKNOWN -> {
                // Either way.
            }
            case ACKED -> {
                Outcome d = delete == null ? null : delete.outcome();
                if (d == null && !present) {
                    problems.add(what + ": the acknowledged create is lost");
                } else if (d == Outcome.ACKED && present) {
                    problems.add(what + ": the acknowledged delete is lost");
                } else if (d == Outcome.REFUSED && !present) {
                    problems.add(what + ": the delete was refused (" + delete.error() + "), yet the object is gone: a change applied twice");
                }
            }
            default -> throw new IllegalStateException();
        }
    }

    /** A fresh key's upload. */
    private static void checkUpload(String key, Op create, List<String> ids, List<String> problems) {
        String what = "upload of '" + brief(key) + "' (client " + create.client() + ", " + create.outcome() + ")";
        if (ids.size() > 1) {
            problems.add(what + " made " + ids.size() + " uploads " + ids + ": a change applied twice");
        } else if (create.outcome() == Outcome.ACKED && !ids.equals(List.of(create.uploadId()))) {
            problems.add(what + ": the acknowledged upload " + create.uploadId() + " is lost (there are " + ids + ")");
        } else if (create.outcome() == Outcome.REFUSED && !ids.isEmpty()) {
            problems.add(what + " was refused, yet there are uploads " + ids);
        }
    }

    /** A key for a message: the first 60 characters. */
    private static String brief(String key) {
        return key.length() > 60 ? key.substring(0, 60) + "..." : key;
    }
}
