package io.hayloft.serverkit.config;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.lang.reflect.Field;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Loads a server configuration: a YAML file (optional), then command-line overrides of the form
 * {@code dotted.key=value} (a comma-separated value sets a list), bound to a plain Java class with
 * Jackson. Unknown keys are refused with an error that names them, so a typo never silently
 * falls back to a default.
 *
 * <p>Thread-safe (stateless).
 */
public final class ConfigLoader {
    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory())
            .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
            .enable(DeserializationFeature.ACCEPT_SINGLE_VALUE_AS_ARRAY);

    private ConfigLoader() {
    }

    /**
     * Loads from the arguments of a bare server main: {@code [--config FILE] [key=value ...]} (the
     * {@code hayloft} subcommands parse their own options).
     */
    public static <T> T fromArgs(String[] args, Class<T> type) throws IOException {
        Path config = null;
        List<String> overrides = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            if ("--config".equals(args[i]) && i + 1 < args.length) {
                config = Path.of(args[++i]);
            } else {
                overrides.add(args[i]);
            }
        }
        return load(config, overrides, type);
    }

    /**
     * @param yaml the file, or null to start from the class's defaults
     * @param overrides {@code key=value} strings, applied in order after the file
     * @throws IllegalArgumentException naming the file, key or value that is wrong
     */
    public static <T> T load(Path yaml, Iterable<String> overrides, Class<T> type) throws IOException {
        ObjectNode root;
        if (yaml != null) {
            if (!Files.isRegularFile(yaml)) {
                throw new IllegalArgumentException("config file not found: " + yaml);
            }
            JsonNode n;
            try {
                n = YAML.readTree(yaml.toFile());
            } catch (JsonProcessingException e) {
                // The parser's own message quotes the offending line, which may hold a secret: say where only.
                var at = e.getLocation();
                throw new IllegalArgumentException("config file " + yaml + " is not valid YAML"
                        + (at == null ? "" : " (line " + at.getLineNr() + ", column " + at.getColumnNr() + ")"));
            }
            if (n == null || n.isMissingNode() || n.isNull()) {
                root = JsonNodeFactory.instance.objectNode();
            } else if (n instanceof ObjectNode o) {
                root = o;
            } else {
                throw new IllegalArgumentException("config file " + yaml + " must hold a YAML mapping, got " + n.getNodeType());
            }
        } else {
            root = JsonNodeFactory.instance.objectNode();
        }
        for (String o : overrides) {
            apply(root, o);
        }
        joinCommaLists(root, type);
        try {
            return YAML.treeToValue(root, type);
        } catch (UnrecognizedPropertyException e) {
            throw new IllegalArgumentException("unknown config key '" + e.getPropertyName() + "'"
                    + (yaml == null ? "" : " in " + yaml) + "; known keys: " + e.getKnownPropertyIds(), e);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("bad config value" + (yaml == null ? "" : " in " + yaml) + ": "
                    + e.getOriginalMessage(), e);
        }
    }

    /** Applies the overrides of a map (key to value), for tests and embedding. */
    public static <T> T load(Path yaml, Map<String, String> overrides, Class<T> type) throws IOException {
        return load(yaml, overrides.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue()).toList(), type);
    }

    /** A list given for a {@link CommaList} field (a YAML list, a {@code key=a,b} override) becomes its comma-joined text. */
    private static void joinCommaLists(ObjectNode root, Class<?> type) {
        for (Field f : type.getFields()) {
            if (f.isAnnotationPresent(CommaList.class) && root.get(f.getName()) instanceof ArrayNode a) {
                List<String> items = new ArrayList<>();
                for (JsonNode item : a) {
                    if (!item.isValueNode() || item.isNull()) {
                        throw new IllegalArgumentException("bad config value for " + f.getName()
                                + ": a list of host:port strings is expected, got an item " + item.getNodeType());
                    }
                    items.add(item.asText().trim());
                }
                root.put(f.getName(), String.join(",", items));
            }
        }
    }

    private static void apply(ObjectNode root, String override) {
        int eq = override.indexOf('=');
        if (eq <= 0) {
            // Never echo the argument: "clusterSecret:VALUE" or a bare "$SECRET" would print the secret.
            throw new IllegalArgumentException("config override must look like key=value; got an argument of "
                    + override.length() + " characters with no '=' (not shown: it may hold a secret)");
        }
        String[] path = override.substring(0, eq).trim().split("\\.");
        String value = override.substring(eq + 1).trim();
        ObjectNode node = root;
        for (int i = 0; i < path.length - 1; i++) {
            JsonNode child = node.get(path[i]);
            if (!(child instanceof ObjectNode)) {
                child = node.putObject(path[i]);
            }
            node = (ObjectNode) child;
        }
        String leaf = path[path.length - 1];
        if (node.get(leaf) instanceof ArrayNode || value.contains(",")) {
            ArrayNode a = node.putArray(leaf);
            for (String part : value.split(",")) {
                if (!part.isBlank()) {
                    a.add(part.trim());
                }
            }
        } else {
            node.put(leaf, value);
        }
    }
}
