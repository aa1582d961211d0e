export declare function lowestAllowed(range: string): number[] | undefined;
export declare function unsupportedNode(version: string, range: string): string | undefined;
