/**
 * The 15 visemes the player drives, as weighted sums of the FaceKit's ARKit expression shapes.
 * The player adds jawOpen from the loudness envelope on top (and pulls it down for PP/FF), so the
 * visemes carry only a little jaw of their own and mostly shape the lips. PP carries mouthClose,
 * which seals the lips against the jaw the envelope still leaves open (up to jawOpen ≈ 0.3).
 * The table is repeated in docs/player.md.
 */
export const VISEME_RECIPES: Record<string, Record<string, number>> = {
  viseme_sil: {},
  viseme_PP: { mouthClose: 0.3, mouthPressLeft: 0.45, mouthPressRight: 0.45, mouthRollLower: 0.15, mouthRollUpper: 0.1 },
  viseme_FF: { mouthRollLower: 0.55, mouthShrugLower: 0.25, mouthUpperUpLeft: 0.2, mouthUpperUpRight: 0.2, mouthClose: 0.15 },
  viseme_TH: { jawOpen: 0.08, mouthStretchLeft: 0.12, mouthStretchRight: 0.12, mouthUpperUpLeft: 0.1, mouthUpperUpRight: 0.1 },
  viseme_DD: { jawOpen: 0.1, mouthStretchLeft: 0.2, mouthStretchRight: 0.2, mouthUpperUpLeft: 0.1, mouthUpperUpRight: 0.1 },
  viseme_kk: { jawOpen: 0.12, mouthStretchLeft: 0.25, mouthStretchRight: 0.25 },
  viseme_CH: { jawOpen: 0.05, mouthFunnel: 0.5, mouthPucker: 0.15, mouthUpperUpLeft: 0.15, mouthUpperUpRight: 0.15 },
  viseme_SS: {
    jawOpen: 0.02,
    mouthStretchLeft: 0.35,
    mouthStretchRight: 0.35,
    mouthSmileLeft: 0.15,
    mouthSmileRight: 0.15,
    mouthUpperUpLeft: 0.1,
    mouthUpperUpRight: 0.1,
  },
  viseme_nn: { jawOpen: 0.08, mouthStretchLeft: 0.15, mouthStretchRight: 0.15 },
  viseme_RR: { jawOpen: 0.05, mouthFunnel: 0.35, mouthPucker: 0.3 },
  viseme_aa: {
    jawOpen: 0.25,
    mouthLowerDownLeft: 0.25,
    mouthLowerDownRight: 0.25,
    mouthUpperUpLeft: 0.1,
    mouthUpperUpRight: 0.1,
    mouthStretchLeft: 0.1,
    mouthStretchRight: 0.1,
  },
  viseme_E: {
    jawOpen: 0.12,
    mouthStretchLeft: 0.4,
    mouthStretchRight: 0.4,
    mouthSmileLeft: 0.2,
    mouthSmileRight: 0.2,
    mouthUpperUpLeft: 0.15,
    mouthUpperUpRight: 0.15,
    mouthLowerDownLeft: 0.15,
    mouthLowerDownRight: 0.15,
  },
  viseme_I: {
    jawOpen: 0.06,
    mouthStretchLeft: 0.45,
    mouthStretchRight: 0.45,
    mouthSmileLeft: 0.3,
    mouthSmileRight: 0.3,
    mouthUpperUpLeft: 0.15,
    mouthUpperUpRight: 0.15,
  },
  viseme_O: { jawOpen: 0.18, mouthFunnel: 0.65, mouthPucker: 0.25 },
  viseme_U: { jawOpen: 0.04, mouthPucker: 0.85, mouthFunnel: 0.3 },
};
