/** The built-in studio backdrops: what the player paints behind the face. */
export interface Backdrop {
  backdrop_id: string;
  name: string;
  description: string;
  /** How the player draws it: a vertical gradient, plus optional soft shapes for depth. */
  kind: 'gradient' | 'room' | 'bokeh';
  colors: { top: string; bottom: string; accent: string };
  /** Blur of the painted backdrop, 0 sharp to 1 very soft (depth of field). */
  blur: number;
}

export const BACKDROPS: Backdrop[] = [
  {
    backdrop_id: 'studio_grey',
    name: 'Studio grey',
    description: 'Neutral photo-studio grey sweep',
    kind: 'gradient',
    colors: { top: '#8d9196', bottom: '#4b4f55', accent: '#b9bec4' },
    blur: 0.2,
  },
  {
    backdrop_id: 'studio_white',
    name: 'Studio white',
    description: 'Bright high-key white sweep',
    kind: 'gradient',
    colors: { top: '#f4f5f7', bottom: '#cfd3d8', accent: '#ffffff' },
    blur: 0.2,
  },
  {
    backdrop_id: 'night_blue',
    name: 'Night blue',
    description: 'Deep blue gradient with a soft rim glow',
    kind: 'gradient',
    colors: { top: '#1b2a4a', bottom: '#070b16', accent: '#3d6fb6' },
    blur: 0.3,
  },
  {
    backdrop_id: 'warm_office',
    name: 'Warm office',
    description: 'Blurred office with warm lamps and shelves',
    kind: 'room',
    colors: { top: '#7a5a3c', bottom: '#3b2a1e', accent: '#f2c27b' },
    blur: 0.8,
  },
  {
    backdrop_id: 'modern_lobby',
    name: 'Modern lobby',
    description: 'Blurred bright lobby with glass and plants',
    kind: 'room',
    colors: { top: '#c7d3d6', bottom: '#6f7d73', accent: '#7fa86b' },
    blur: 0.8,
  },
  {
    backdrop_id: 'city_bokeh',
    name: 'City at night',
    description: 'Out-of-focus city lights',
    kind: 'bokeh',
    colors: { top: '#1d1830', bottom: '#0c0a14', accent: '#f5b556' },
    blur: 0.9,
  },
  {
    backdrop_id: 'sunset',
    name: 'Sunset',
    description: 'Warm orange-to-violet sky gradient',
    kind: 'gradient',
    colors: { top: '#f29b5c', bottom: '#6b4a8c', accent: '#ffd08a' },
    blur: 0.3,
  },
  {
    backdrop_id: 'mint',
    name: 'Mint',
    description: 'Fresh light mint brand colour',
    kind: 'gradient',
    colors: { top: '#d6f2e6', bottom: '#93cdb4', accent: '#ffffff' },
    blur: 0.2,
  },
  {
    backdrop_id: 'clinic',
    name: 'Clinic',
    description: 'Calm blurred clinic reception in teal and white',
    kind: 'room',
    colors: { top: '#e3eef0', bottom: '#8fb4b9', accent: '#3f8f98' },
    blur: 0.8,
  },
  {
    backdrop_id: 'library_bokeh',
    name: 'Library',
    description: 'Out-of-focus bookshelves in warm light',
    kind: 'bokeh',
    colors: { top: '#5a3d27', bottom: '#24170e', accent: '#e0a35e' },
    blur: 0.9,
  },
];

export const BACKDROP_IDS = new Set(BACKDROPS.map((b) => b.backdrop_id));
