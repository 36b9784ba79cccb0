# rules: 
# modes: modelarts
import os

name = os.path.basename(path)
value = json.loads(text)
