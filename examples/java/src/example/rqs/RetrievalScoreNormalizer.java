package example.rqs;

/**
 * The single normalizer: every hit's {@code qualityScore} in [0, 1], higher is better, branching on the
 * canonical label only.
 *
 * <ul>
 *   <li>dense: {@code max(0, 1 - min(d, maxL2Distance) / maxL2Distance)} on the L2 distance, a null
 *       distance giving 0;
 *   <li>hybrid with a dense distance attached: the same formula on that distance (an absolute
 *       similarity the gates may use; the order stays the hybrid one);
 *   <li>hybrid otherwise: a map of the rank within its batch, rank 1 giving 1.0 and never rising with
 *       the rank; it never reads the fused score's magnitude.
 * </ul>
 */
public final class RetrievalScoreNormalizer {
    private RetrievalScoreNormalizer() {}

    /**
     * @param score the hit's primary score (dense: its L2 distance), or null
     * @param denseDistance an optional dense L2 distance attached to a hybrid hit, or null
     */
    public static double qualityScore(
            String label, Double score, int originalRank, int batchSize, double maxL2Distance,
            Double denseDistance) {
        if (RetrievalScoreLabels.isDense(label)) {
            return fromDistance(score, maxL2Distance);
        }
        if (denseDistance != null) {
            return fromDistance(denseDistance, maxL2Distance);
        }
        return fromRank(originalRank, batchSize);
    }

    static double fromDistance(Double distance, double maxL2Distance) {
        if (distance == null) {
            return 0.0;
        }
        if (!(maxL2Distance > 0.0) || Double.isInfinite(maxL2Distance)) {
            throw new IllegalArgumentException(
                    "maxL2Distance must be a positive number, got " + maxL2Distance);
        }
        double clamped = Math.min(Math.max(distance, 0.0), maxL2Distance);
        return Math.max(0.0, 1.0 - clamped / maxL2Distance);
    }

    static double fromRank(int originalRank, int batchSize) {
        int n = Math.max(batchSize, 1);
        return Math.max(0.0, 1.0 - (double) (originalRank - 1) / n);
    }
}
