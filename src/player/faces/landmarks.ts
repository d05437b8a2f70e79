/**
 * Named vertex loops of MediaPipe's canonical face mesh (the published FACEMESH_* contours).
 * Left/Right are the subject's own sides: Left is +x (the glTF model faces +z).
 */
export const EYE_LEFT_UPPER = [263, 466, 388, 387, 386, 385, 384, 398, 362];
export const EYE_LEFT_LOWER = [263, 249, 390, 373, 374, 380, 381, 382, 362];
export const EYE_RIGHT_UPPER = [33, 246, 161, 160, 159, 158, 157, 173, 133];
export const EYE_RIGHT_LOWER = [33, 7, 163, 144, 145, 153, 154, 155, 133];

export const LIP_OUTER_UPPER = [61, 185, 40, 39, 37, 0, 267, 269, 270, 409, 291];
export const LIP_OUTER_LOWER = [61, 146, 91, 181, 84, 17, 314, 405, 321, 375, 291];
export const LIP_INNER_UPPER = [78, 191, 80, 81, 82, 13, 312, 311, 310, 415, 308];
export const LIP_INNER_LOWER = [78, 95, 88, 178, 87, 14, 317, 402, 318, 324, 308];

export const BROW_LEFT = [336, 296, 334, 293, 300, 285, 295, 282, 283, 276];
export const BROW_RIGHT = [107, 66, 105, 63, 70, 55, 65, 52, 53, 46];

export const NOSE_TIP = 4;
export const NOSE_BRIDGE = 168;
export const CHIN = 152;
export const FOREHEAD = 10;
