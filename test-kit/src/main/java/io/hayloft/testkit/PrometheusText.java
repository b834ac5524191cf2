package io.hayloft.testkit;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads samples out of a server's {@code /metrics} (Prometheus text format), for tests that check a
 * counter from the outside. Stateless.
 */
public final class PrometheusText {
    private static final Pattern SAMPLE = Pattern.compile("(?m)^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\\{([^}]*)\\})? (\\S+)$");
    private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");

    private PrometheusText() {
    }

    /**
     * The sum of the samples of {@code name} whose labels include every {@code label=value} pair
     * given (as alternating names and values), or NaN when no sample matches: a missing metric is
     * then told apart from a zero one.
     */
    public static double sum(String metrics, String name, String... labels) {
        if (labels.length % 2 != 0) {
            throw new IllegalArgumentException("labels come as name, value pairs");
        }
        double sum = 0;
        boolean found = false;
        Matcher m = SAMPLE.matcher(metrics == null ? "" : metrics);
        while (m.find()) {
            if (!m.group(1).equals(name) || !hasLabels(m.group(2), labels)) {
                continue;
            }
            sum += Double.parseDouble(m.group(3));
            found = true;
        }
        return found ? sum : Double.NaN;
    }

    private static boolean hasLabels(String set, String[] labels) {
        for (int i = 0; i < labels.length; i += 2) {
            boolean has = false;
            Matcher l = LABEL.matcher(set == null ? "" : set);
            while (l.find()) {
                if (l.group(1).equals(labels[i]) && l.group(2).equals(labels[i + 1])) {
                    has = true;
                    break;
                }
            }
            if (!has) {
                return false;
            }
        }
        return true;
    }
}
