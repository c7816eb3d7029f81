package example.rqs;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Turns retrieval hits into ordered evidence and decides the gates.
 *
 * <p>Candidates are taken in {@code originalRank} order (a stable sort: equal ranks keep their input
 * order), a chunk is accepted once, at most {@code maxChunksPerDocument} per document and {@code returnN}
 * in all. L0 hints may explain a block ({@code hitReasons}); they never move or rescore it. The relevance
 * level and the low-quality flag read the accepted blocks' top {@code qualityScore} only.
 */
public final class KnowledgeEvidencePostProcessor {

    /** One retrieval hit, as post-processing receives it. */
    public record Candidate(
            String docId, long chunkIndex, String text, int originalRank, Double score, String scoreLabel,
            Double denseDistance) {
        String evidenceKey() {
            return docId + "#" + chunkIndex;
        }
    }

    /** L0 hints: context about the question, never a ranking signal. */
    public record Hints(List<String> keywords) {}

    public record Config(
            double maxL2Distance, double highlyRelevantThreshold, double referenceThreshold, int returnN,
            int maxChunksPerDocument) {}

    public record Block(
            String evidenceKey, String docId, long chunkIndex, int originalRank, double qualityScore,
            String scoreLabel, List<String> hitReasons) {}

    public record Dropped(String evidenceKey, int originalRank, String reason) {}

    /** {@code topQualityScore} is null when nothing was accepted. */
    public record Result(
            List<Block> blocks, List<Dropped> dropped, String relevanceLevel, Double topQualityScore,
            boolean isLowQuality) {}

    private KnowledgeEvidencePostProcessor() {}

    public static Result process(List<Candidate> candidates, Hints hints, Config config) {
        List<Candidate> ordered = new ArrayList<>(candidates);
        ordered.sort(Comparator.comparingInt(Candidate::originalRank)); // List.sort is stable
        List<Block> blocks = new ArrayList<>();
        List<Dropped> dropped = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        Map<String, Integer> perDocument = new HashMap<>();
        for (Candidate c : ordered) {
            String key = c.evidenceKey();
            String reason = null;
            if (!seen.add(key)) {
                reason = "duplicate";
            } else if (perDocument.getOrDefault(c.docId(), 0) >= config.maxChunksPerDocument()) {
                reason = "per_document_cap";
            } else if (blocks.size() >= config.returnN()) {
                reason = "return_n";
            }
            if (reason != null) {
                dropped.add(new Dropped(key, c.originalRank(), reason));
                continue;
            }
            perDocument.merge(c.docId(), 1, Integer::sum);
            double quality = RetrievalScoreNormalizer.qualityScore(
                    c.scoreLabel(), c.score(), c.originalRank(), candidates.size(), config.maxL2Distance(),
                    c.denseDistance());
            blocks.add(new Block(
                    key, c.docId(), c.chunkIndex(), c.originalRank(), quality,
                    RetrievalScoreLabels.canonicalize(c.scoreLabel()), reasons(c, hints)));
        }
        Double top = blocks.stream().map(Block::qualityScore).max(Double::compare).orElse(null);
        return new Result(blocks, dropped, level(top, config), top,
                top == null || top < config.referenceThreshold());
    }

    private static List<String> reasons(Candidate c, Hints hints) {
        List<String> reasons = new ArrayList<>(List.of("retrieval_rank"));
        String text = c.text() == null ? "" : c.text().toLowerCase(Locale.ROOT);
        boolean overlap = hints.keywords().stream()
                .anyMatch(k -> k != null && !k.isEmpty() && text.contains(k.toLowerCase(Locale.ROOT)));
        if (overlap) {
            reasons.add("l0_keyword_overlap");
        }
        return reasons;
    }

    private static String level(Double top, Config config) {
        if (top == null) {
            return "NONE";
        }
        if (top >= config.highlyRelevantThreshold()) {
            return "PRECISE";
        }
        if (top >= config.referenceThreshold()) {
            return "RELEVANT";
        }
        return top > 0.0 ? "WEAK" : "NONE";
    }
}
