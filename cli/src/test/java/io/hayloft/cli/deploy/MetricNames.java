package io.hayloft.cli.deploy;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Metric names on both sides of a dashboard: the series a Prometheus text exposition holds, and the
 * metric names a PromQL expression selects (what is left after string literals, label matchers,
 * range selectors, variables, grouping clauses, function calls and keywords are taken out).
 * Stateless, hence thread-safe.
 */
final class MetricNames {
    private static final Pattern IDENT = Pattern.compile("[a-zA-Z_:][a-zA-Z0-9_:]*");
    private static final Set<String> KEYWORDS = Set.of("by", "without", "on", "ignoring", "group_left", "group_right",
            "bool", "and", "or", "unless", "offset", "inf", "nan", "e");

    private MetricNames() {
    }

    /** Every series name in a Prometheus text exposition. */
    static Set<String> exported(String exposition) {
        Set<String> names = new TreeSet<>();
        for (String line : exposition.split("\n")) {
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            Matcher m = IDENT.matcher(line);
            if (m.lookingAt()) {
                names.add(m.group());
            }
        }
        return names;
    }

    /** Every metric name a PromQL expression selects. */
    static Set<String> used(String expr) {
        String s = expr.replaceAll("\"(?:[^\"\\\\]|\\\\.)*\"", "\"\"")           // string literals
                .replaceAll("\\{[^}]*}", " ")                                        // label matchers
                .replaceAll("\\[[^]]*]", " ")                                        // range selectors
                .replaceAll("\\$\\{?[a-zA-Z_][a-zA-Z0-9_]*}?", " ")                 // dashboard variables
                .replaceAll("\\b(by|without|on|ignoring|group_left|group_right)\\s*\\([^)]*\\)", " ");
        Set<String> names = new TreeSet<>();
        Matcher m = IDENT.matcher(s);
        while (m.find()) {
            String id = m.group();
            int after = m.end();
            while (after < s.length() && Character.isWhitespace(s.charAt(after))) {
                after++;
            }
            boolean call = after < s.length() && s.charAt(after) == '(';
            boolean number = m.start() > 0 && (Character.isDigit(s.charAt(m.start() - 1)) || s.charAt(m.start() - 1) == '.');
            if (!call && !number && !KEYWORDS.contains(id.toLowerCase(Locale.ROOT))) {
                names.add(id);
            }
        }
        return names;
    }

    /** Every PromQL expression of a Grafana dashboard's panels (rows and nested panels included). */
    static List<String> dashboardExpressions(JsonNode dashboard) {
        List<String> out = new ArrayList<>();
        for (JsonNode target : dashboard.findValues("targets")) {
            for (JsonNode t : target) {
                if (t.hasNonNull("expr")) {
                    out.add(t.get("expr").asText());
                }
            }
        }
        return out;
    }
}
