package example.rqs;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.logging.Logger;

/**
 * The kit's stdio protocol around the three classes: one JSON object per line on stdin, one reply per
 * line on stdout, UTF-8 both ways whatever the platform's default charset, logs on stderr only.
 */
public final class StdioServer {
    private static final int PROTOCOL_VERSION = 1;
    private static final Logger LOG = Logger.getLogger(StdioServer.class.getName());
    // serializeNulls: "result": null must be written (a stop or prepare reply without it is invalid).
    // Gson writes a bare NaN for a NaN double inside a JsonObject: finite() refuses it before that.
    private static final Gson GSON = new GsonBuilder().serializeNulls().disableHtmlEscaping().create();

    /** A question this program does not answer: the kit reports the scenario NOT APPLICABLE. */
    static final class Declined extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Declined(String why) {
            super(why);
        }
    }

    private StdioServer() {}

    public static void main(String[] args) throws IOException {
        // The protocol's own stream, UTF-8 explicitly: under a C locale the JVM's default would write
        // every non-ASCII character of a docId as '?'. Everything else that writes to System.out (a
        // library's banner, a stray println) goes to stderr, so stdout carries protocol lines only.
        PrintStream protocol =
                new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);
        PrintStream errors =
                new PrintStream(new FileOutputStream(FileDescriptor.err), true, StandardCharsets.UTF_8);
        System.setErr(errors);
        System.setOut(errors);
        // Strict UTF-8 on stdin: a malformed byte is an error, never a silent replacement character.
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in,
                StandardCharsets.UTF_8.newDecoder()
                        .onMalformedInput(CodingErrorAction.REPORT)
                        .onUnmappableCharacter(CodingErrorAction.REPORT)));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            JsonObject message = JsonParser.parseString(line).getAsJsonObject();
            protocol.println(GSON.toJson(reply(message)));
            protocol.flush(); // the kit waits for this line
            if ("stop".equals(message.get("type").getAsString())) {
                return;
            }
        }
    }

    static JsonObject reply(JsonObject message) {
        JsonObject reply = new JsonObject();
        reply.add("seq", message.get("seq")); // echoed as it came: an integer
        try {
            reply.add("result", answer(message));
        } catch (Declined declined) {
            reply.addProperty("skipped", declined.getMessage());
        } catch (RuntimeException failure) {
            LOG.warning(() -> "request " + message.get("type") + " failed: " + failure);
            JsonObject error = new JsonObject();
            error.addProperty("message", String.valueOf(failure.getMessage()));
            error.addProperty("kind", failure.getClass().getSimpleName());
            StringWriter trace = new StringWriter();
            failure.printStackTrace(new PrintWriter(trace));
            error.addProperty("context", trace.toString());
            reply = new JsonObject();
            reply.add("seq", message.get("seq"));
            reply.add("error", error);
        }
        return reply;
    }

    private static JsonElement answer(JsonObject message) {
        String type = message.get("type").getAsString();
        switch (type) {
            case "start":
                return start(message);
            case "canonicalize_label":
                return GSON.toJsonTree(RetrievalScoreLabels.canonicalize(message.get("label").getAsString()));
            case "quality_score":
                return GSON.toJsonTree(finite("result", quality(message.getAsJsonObject("request"))));
            case "post_process":
                return postProcess(message.getAsJsonObject("request"));
            case "stop":
                return JsonNull.INSTANCE; // nothing to drop: this program creates no collection
            default:
                throw new Declined("this example implements the pure capabilities only, not '" + type + "'");
        }
    }

    private static JsonElement start(JsonObject message) {
        int version = message.get("protocolVersion").getAsInt();
        if (version != PROTOCOL_VERSION) {
            throw new IllegalStateException(
                    "protocol version " + version + " unknown; this program speaks " + PROTOCOL_VERSION);
        }
        JsonObject info = new JsonObject();
        info.addProperty("name", "java-stdio-example");
        info.addProperty("version", "0.1.0");
        info.addProperty("language", "java"); // without it the kit shows "language unknown"
        JsonArray capabilities = new JsonArray();
        for (String capability : List.of("labels", "quality", "post_process")) {
            capabilities.add(capability);
        }
        info.add("capabilities", capabilities);
        return info;
    }

    private static double quality(JsonObject r) {
        // The kit sends every field, null where absent: read them directly and test for null.
        return RetrievalScoreNormalizer.qualityScore(
                r.get("scoreLabel").getAsString(), number(r.get("score")), r.get("originalRank").getAsInt(),
                r.get("batchSize").getAsInt(), r.get("maxL2Distance").getAsDouble(),
                number(r.get("denseDistance")));
    }

    private static JsonElement postProcess(JsonObject r) {
        List<KnowledgeEvidencePostProcessor.Candidate> candidates = new ArrayList<>();
        for (JsonElement element : r.getAsJsonArray("candidates")) {
            JsonObject c = element.getAsJsonObject();
            candidates.add(new KnowledgeEvidencePostProcessor.Candidate(
                    c.get("docId").getAsString(),
                    c.get("chunkIndex").getAsLong(), // an exact integer, not a double
                    text(c.get("text")),
                    c.get("originalRank").getAsInt(),
                    number(c.get("score")),
                    c.get("scoreLabel").getAsString(),
                    number(c.get("denseDistance"))));
        }
        List<String> keywords = new ArrayList<>();
        for (JsonElement keyword : r.getAsJsonObject("hints").getAsJsonArray("keywords")) {
            keywords.add(keyword.getAsString());
        }
        JsonObject config = r.getAsJsonObject("config");
        KnowledgeEvidencePostProcessor.Result result = KnowledgeEvidencePostProcessor.process(
                candidates,
                new KnowledgeEvidencePostProcessor.Hints(keywords),
                new KnowledgeEvidencePostProcessor.Config(
                        config.get("maxL2Distance").getAsDouble(),
                        config.get("highlyRelevantThreshold").getAsDouble(),
                        config.get("referenceThreshold").getAsDouble(),
                        config.get("returnN").getAsInt(),
                        config.get("maxChunksPerDocument").getAsInt()));
        JsonObject out = new JsonObject();
        JsonArray blocks = new JsonArray();
        for (KnowledgeEvidencePostProcessor.Block b : result.blocks()) {
            JsonObject block = new JsonObject();
            block.addProperty("evidenceKey", b.evidenceKey());
            block.addProperty("docId", b.docId());
            block.addProperty("chunkIndex", b.chunkIndex());
            block.addProperty("originalRank", b.originalRank());
            block.addProperty("qualityScore", finite("qualityScore", b.qualityScore()));
            block.addProperty("scoreLabel", b.scoreLabel());
            block.add("hitReasons", GSON.toJsonTree(b.hitReasons()));
            blocks.add(block);
        }
        out.add("blocks", blocks);
        JsonArray dropped = new JsonArray();
        for (KnowledgeEvidencePostProcessor.Dropped d : result.dropped()) {
            JsonObject entry = new JsonObject();
            entry.addProperty("evidenceKey", d.evidenceKey());
            entry.addProperty("originalRank", d.originalRank());
            entry.addProperty("reason", d.reason());
            dropped.add(entry);
        }
        out.add("dropped", dropped);
        out.addProperty("relevanceLevel", result.relevanceLevel());
        Double top = result.topQualityScore();
        out.add("topQualityScore",
                top == null ? JsonNull.INSTANCE : GSON.toJsonTree(finite("topQualityScore", top)));
        out.addProperty("isLowQuality", result.isLowQuality());
        return out;
    }

    private static Double number(JsonElement element) {
        return element == null || element.isJsonNull() ? null : element.getAsDouble();
    }

    private static String text(JsonElement element) {
        return element == null || element.isJsonNull() ? null : element.getAsString();
    }

    /** JSON has no NaN or Infinity: refuse to write one (the kit would reject the line anyway). */
    private static double finite(String field, double value) {
        if (!Double.isFinite(value)) {
            throw new ArithmeticException(field + " is " + value + ", which JSON cannot carry");
        }
        return value;
    }
}
