/** A cost center of the platform, as the owner directory names it (lib/owners): an id and a name, never a key. */
export interface CostCenterRef {
  id: string;
  name: string;
}
