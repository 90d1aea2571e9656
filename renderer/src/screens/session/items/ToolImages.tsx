import { memo, useEffect, useState, type JSX } from 'react';
import type { ToolImage } from '../../../../../main/ipc/contract.js';
import { call, describeError } from '../../../api/call.js';
import { keel } from '../../../api/keel.js';

/**
 * The images a tool result kept as artifacts, inline: each read through artifacts.image (main checks the
 * handle is an image of this session and gives the type its bytes are) and shown as a data: URL, the one
 * image source besides the app itself the CSP allows. Nothing is fetched from a server's URL.
 */
export const ToolImages = memo(function ToolImages({
  sessionId,
  tool,
  images,
}: {
  sessionId: string;
  tool: string;
  images: readonly ToolImage[];
}): JSX.Element {
  return (
    <div className="tool-images">
      {images.map((image, index) => (
        <ArtifactImage
          key={image.handle}
          sessionId={sessionId}
          image={image}
          alt={`Image ${index + 1} from ${tool} (${image.mimeType}, ${image.bytes} bytes)`}
        />
      ))}
    </div>
  );
});

function ArtifactImage({
  sessionId,
  image,
  alt,
}: {
  sessionId: string;
  image: ToolImage;
  alt: string;
}): JSX.Element {
  const [source, setSource] = useState<string | undefined>();
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    let live = true;
    call(keel().artifacts.image({ sessionId, handle: image.handle }))
      .then((read) => live && setSource(`data:${read.mimeType};base64,${read.data}`))
      .catch((failure: unknown) => live && setError(describeError(failure)));
    return () => {
      live = false;
    };
  }, [sessionId, image.handle]);
  if (error)
    return <p className="tool-image-error">{`Image ${image.handle} could not be shown: ${error}`}</p>;
  if (!source) return <p className="tool-image-loading">Loading image…</p>;
  return (
    <figure className="tool-image">
      <img src={source} alt={alt} title={image.handle} />
      <figcaption>{image.handle}</figcaption>
    </figure>
  );
}
